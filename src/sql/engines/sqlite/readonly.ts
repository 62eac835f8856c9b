/** True for the error SQLite gives a connection that may not write (read-only file or handle). */
export function isReadonlyError(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    if (/readonly|read-only|SQLITE_READONLY/i.test(`${(e as { code?: unknown }).code ?? ""} ${e.message}`)) {
      return true;
    }
  }
  return false;
}
