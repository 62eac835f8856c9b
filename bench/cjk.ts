/**
 * What a question in Chinese costs: its character pairs are its terms (src/search/cjk.ts), so a question of 12
 * characters is 11 terms, one statement each on SQLite. No data set of Chinese conversations is here, so the
 * messages are random sentences from a 50-word vocabulary (every pair is common: a hard case for the caps), in one
 * session of SIZES messages (default 10,000 and 100,000), asked QUERIES (default 300) random questions after 50
 * untimed ones. `npm run bench:script bench/cjk.ts`.
 */
import { SqliteStore } from "../src/sqlite/store.js";
import { rng } from "./data.js";

const VOCABULARY = (
  "我 你 他 喜欢 吃 苹果 香蕉 昨天 今天 明天 公园 天气 很好 下雨 东京 北京 上海 工作 学习 朋友 家人 电影 音乐 猫 狗 " +
  "买 了 的 是 在 去 看 和 一起 什么 怎么 为什么 时候 地方 相机 镜头 手机 电脑 咖啡 茶 早上 晚上 周末 旅行 飞机"
).split(" ");
const sizes = (process.env.SIZES ?? "10000,100000").split(",").map(Number);
const queries = Number(process.env.QUERIES ?? 300);
const random = rng(7);
const sentence = (words: number) =>
  `${Array.from({ length: words }, () => VOCABULARY[Math.floor(random() * VOCABULARY.length)]).join("")}。`;

for (const size of sizes) {
  const store = new SqliteStore(":memory:");
  const session = store.session("c");
  for (let i = 0; i < size; i++) {
    const text = sentence(8 + (i % 12));
    await session.appendMessage({
      id: `m${i}`,
      role: i % 2 ? "assistant" : "user",
      parts: [{ type: "text", text }],
    });
  }
  const asked = Array.from({ length: queries + 50 }, () => `${sentence(6)}吗？`);
  for (const question of asked.slice(0, 50)) await store.searchMessages(question, { sessionId: "c" });
  const times: number[] = [];
  for (const question of asked.slice(50)) {
    const start = performance.now();
    await store.searchMessages(question, { sessionId: "c" });
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(2);
  console.log(
    `${size} messages, ${queries} questions (e.g. ${asked[50]}): p50 ${at(0.5)} ms, p99 ${at(0.99)} ms`,
  );
  await store.close();
}
