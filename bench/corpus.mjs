// The benchmarks' deterministic mixed text: English prose, JSON tool output, source code, CJK,
// Arabic, emoji with ZWJ sequences, digit runs and whitespace runs, interleaved in fixed proportions.
const PARTS = [
  'The quick brown fox jumps over the lazy dog while the agent waits for its tool results to arrive. ',
  '{"id": 1234567, "name": "search_result", "score": 0.8734, "tags": ["alpha", "beta"], "ok": true, "url": "https://example.com/a/b?c=d"}\n',
  'fn main() {\n    let mut total: u64 = 0;\n    for i in 0..1000 { total += i * 31; }\n    println!("{total}");\n}\n',
  '東京都は日本の首都であり、世界有数の大都市です。人工知能の研究も盛んに行われています。',
  'مرحبا بكم في عالم الذكاء الاصطناعي والمعالجة الآلية للغة. ',
  '👩‍👩‍👧‍👦 family 🏳️‍🌈 flag 👍🏽 ok 🚀🚀🚀 ',
  '2026-12-02T13:09:51Z 3141592653589793238462643383279 00000000 ',
  '    \n\n\t\t   \r\n    indented   text\n',
  "I'm sure they've said it's what we'd do, and you'll see.",
];

/** About `bytes` bytes of mixed text, the same on every run. */
export function mixedCorpus(bytes) {
  let seed = 0x2545f491;
  const next = () => { seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5; return (seed >>> 0) / 4294967296; };
  const out = [];
  let size = 0;
  while (size < bytes) {
    const p = PARTS[Math.floor(next() * PARTS.length)];
    out.push(p);
    size += Buffer.byteLength(p);
  }
  return out.join('');
}
