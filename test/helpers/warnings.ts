/** The process warnings named `type` that `run` causes (Node emits them on a later tick, so this waits one). */
export async function warningsOf(type: string, run: () => unknown): Promise<Error[]> {
  const seen: Error[] = [];
  const listener = (warning: Error) => {
    if (warning.name === type) seen.push(warning);
  };
  process.on("warning", listener);
  try {
    await run();
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off("warning", listener);
  }
  return seen;
}
