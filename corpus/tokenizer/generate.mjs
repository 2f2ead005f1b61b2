// Oracle corpus for the cl100k_base tokenizer: strings and their token ids as npm
// gpt-tokenizer@4.0.0 encodes them with `disallowedSpecial: new Set()` (special-token spellings
// are ordinary text). Deterministic: a seeded PRNG, no clock, no environment.
//
// Run:  node corpus/tokenizer/generate.mjs corpus/tokenizer/oracle.jsonl
// Writes the corpus and prints its sha256 (pin it in tests/tokenizer/main.rs and oracle.sha256).
//
// Line formats (JSON Lines; `k` names the category):
//   {"k":..., "t": text, "ids": [...]}
//   {"k":"prefixes", "t": text, "p": [[keep, [ids...]], ...]}  entry n is the prefix of the first n
//       code points of t (n = 0..len): keep the first `keep` ids of prefix n-1, then append ids.
// Strings never hold lone surrogates (Rust strings cannot).
import { createHash } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { encode } from 'gpt-tokenizer/encoding/cl100k_base'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const version = require('gpt-tokenizer/package.json').version
if (version !== '4.0.0') throw new Error(`expected gpt-tokenizer 4.0.0, found ${version}`)

const options = { disallowedSpecial: new Set() }
const ids = (text) => encode(text, options)

// mulberry32: small, well-known, deterministic.
let seed = 0x5eed_c1a0
function random() {
  seed = (seed + 0x6d2b79f5) | 0
  let t = seed
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const int = (n) => Math.floor(random() * n)
const pick = (xs) => xs[int(xs.length)]
const repeat = (n, f) => Array.from({ length: n }, (_, i) => f(i))

const words = `the quick brown fox jumps over lazy dog token budget context window agent meter
  receipt payload canonical prefix suffix marker truncated removed under efficiency tokenizer
  international naïve café résumé straße Zürich façade coöperate señor año jalapeño Ελληνικά
  русский язык Україна ქართული Հայերեն עברית العربية فارسی हिन्दी বাংলা தமிழ் ไทย ລາວ ኢትዮጵያ
  中文 漢字 日本語 ひらがな カタカナ 한국어 Tiếng Việt`.split(/\s+/).filter(Boolean)
const punct = [...`.,;:!?-_()[]{}<>/\\|@#$%^&*+=~\`"'«»“”‘’…—–·•§¶†‡°′″‰€£¥₿`]
const spaces = [' ', ' ', ' ', '\t', '\n', '\r', '\r\n', '\u00a0', '\u3000', '\u2028', '\u2029', '\u000b',
  '\u000c', '\ufeff', '\u0085', '\u1680', '\u2002', '\u200a', '\u202f', '\u205f', '\u200b', '\u180e']
const digits = [...'0123456789', '٠', '١', '٢', '٣', '۴', '५', '৬', '๗', '０', '９', '²', '³', '¹', '½',
  'Ⅻ', 'ⅷ', '①', '𝟙', '𝟘', '𐒠', '〇', '〥']
const emoji = ['😀', '👍🏽', '👩‍👩‍👧‍👦', '🧑🏿‍🚀', '🏳️‍🌈', '🇨🇦', '🇯🇵', '❤️', '✋🏻', '👨‍💻', '🫠', '🪐', '⚙️', '1️⃣', '#️⃣', '🏴󠁧󠁢󠁳󠁣󠁴󠁿']
const specials = ['<|endoftext|>', '<|fim_prefix|>', '<|fim_middle|>', '<|fim_suffix|>', '<|im_start|>',
  '<|im_end|>', '<|im_sep|>', '<|endofprompt|>', '<|endoftext', '|>', '<|', '<|unknown|>']
const contractions = ["'s", "'S", "'t", "'T", "'d", "'D", "'m", "'M", "'ll", "'LL", "'Ll", "'lL", "'ve",
  "'VE", "'Ve", "'vE", "'re", "'RE", "'Re", "'rE", "'x", "'", "’s", "'l", "'v", "'r"]
const combining = ['\u0301', '\u0300', '\u0308', '\u0327', '\u0323', '\u20dd', '\u0489', '\u093f', '\u0e31',
  '\u064b', '\u05b7', '\u1ab0', '\ufe0f', '\u200d', '\u{e0041}']

function prose() {
  return repeat(1 + int(40), () => pick(words) + (random() < 0.2 ? pick(punct) : '') + (random() < 0.1 ? pick(contractions) : ''))
    .join(random() < 0.9 ? ' ' : pick(spaces))
}
function json() {
  const value = (depth) => {
    const r = random()
    if (depth > 3 || r < 0.3) return pick([null, true, false, int(1e6), -int(1000) / 7, 1e21, pick(words), prose().slice(0, 40)])
    if (r < 0.6) return repeat(int(4), () => value(depth + 1))
    return Object.fromEntries(repeat(1 + int(4), () => [pick(words), value(depth + 1)]))
  }
  return JSON.stringify(value(0), null, pick([undefined, 0, 1, 2, 4, '\t']))
}
function code() {
  const lines = [
    'fn main() {', '    let x = vec![1, 2, 3];', '    println!("{:?}", x);', '}', 'def f(a, b=None):',
    '\treturn {"k": a ** 2}', 'const y = (a) => a?.b ?? 0;', '#include <stdio.h>', 'SELECT * FROM t WHERE id = 42;',
    '    if (x !== y) { throw new Error(`bad ${x}`); }', '<div class="a">&nbsp;</div>', '// comment', '/* block */',
    'x += 1;;', '    ', '', 'élan = 3', 'λx.x', '  return 0x1F_FF_u32;',
  ]
  return repeat(1 + int(20), () => pick(lines)).join(pick(['\n', '\r\n', '\n\n', '\n  \n']))
}
function whitespaceRuns() {
  return repeat(1 + int(10), () => {
    const run = repeat(1 + int(8), () => pick(spaces)).join('')
    return run + pick(['', 'a', 'word', '1', '.', '{', ' x', '中', '\n', pick(punct)])
  }).join('')
}
function digitRuns() {
  return repeat(1 + int(6), () => repeat(1 + int(30), () => (random() < 0.7 ? pick('0123456789') : pick(digits))).join('') + pick(['', ' ', '.', ',', 'a', '\n', ' 1']))
    .join('')
}
function emojiText() {
  return repeat(1 + int(15), () => pick(emoji) + (random() < 0.5 ? pick(words) : '') + (random() < 0.3 ? ' ' : '')).join('')
}
function script(name) {
  const ranges = {
    cjk: [0x4e00, 0x9fff], hiragana: [0x3040, 0x309f], hangul: [0xac00, 0xd7a3], arabic: [0x0600, 0x06ff],
    hebrew: [0x0590, 0x05ff], devanagari: [0x0900, 0x097f], thai: [0x0e00, 0x0e7f], cyrillic: [0x0400, 0x04ff],
  }[name]
  return repeat(1 + int(60), () => (random() < 0.15 ? pick([' ', '，', '。', '、', '،', '؟', '\n', '1', '١']) : String.fromCodePoint(ranges[0] + int(ranges[1] - ranges[0] + 1)))).join('')
}
function combiningMarks() {
  return repeat(1 + int(20), () => pick([...'aeiouxyzAEIOU', 'ا', 'क', 'ก', ' ', '1', '.']) + repeat(int(4), () => pick(combining)).join('')).join('')
}
function sprinkle(text, chars) {
  const cps = [...text]
  for (let n = 1 + int(5); n > 0; n--) cps.splice(int(cps.length + 1), 0, pick(chars))
  return cps.join('')
}
function specialSpellings() {
  return repeat(1 + int(6), () => pick([pick(specials), pick(words), ' ', '\n', pick(punct)])).join(random() < 0.5 ? '' : ' ')
}
function contractionText() {
  return repeat(1 + int(12), () => pick([pick(words), pick(words).toUpperCase(), 'I', 'WE', 'THEY', 'x']) + pick(contractions) + pick(['', ' ', 'a', 'S', '.', '\n', pick(contractions)]))
    .join(pick(['', ' ']))
}
function longWord() {
  const alphabet = pick([[...'abcdefghijklmnopqrstuvwxyz'], [...'a'], [...'ab'], [...'ETAOINSHRDLU'], [...'ßéüöçñ'], [...'中文字'], [...'ابتث']])
  return (random() < 0.5 ? ' ' : '') + repeat(200 + int(3000), () => pick(alphabet)).join('')
}
function randomCodePoint() {
  const plane = pick([0, 0, 0, 0, 1, 1, 2, 3, 14, 15, 16, 4, 5, 13])
  for (;;) {
    const cp = plane * 0x10000 + int(0x10000)
    if (cp < 0xd800 || cp > 0xdfff) return String.fromCodePoint(cp)
  }
}
function randomUnicode(n) {
  return repeat(n, () => (random() < 0.1 ? pick(spaces) : random() < 0.1 ? pick('abc 123.\n') : randomCodePoint())).join('')
}
function mixed() {
  return repeat(2 + int(6), () => pick([prose, json, code, whitespaceRuns, digitRuns, emojiText, combiningMarks, specialSpellings, contractionText])()).join(pick(['', ' ', '\n', '\n\n']))
}

const entries = []
const add = (k, t) => entries.push({ k, t, ids: ids(t) })

// Hand-picked edge cases first.
for (const t of ['', ' ', '\n', '\r\n', '  ', '\ufeff', '\ufeff\ufeff', '\u0085', '\ufeffusing namespace std;', '\ufeff//x',
  '\ufeff#', '\ufeff\n', '\ufeff/*\n', '\ufeff\n\n', 'a\ufeff', ' \ufeff', '\ufeff ', 'The quic', 'The quick', "'", "''", "'s",
  "'S", "'LL", "I'LL", 'x\u0085y', '\u0085\n', '   a', '\t\tb', '1234567', '   ', 'a  ', 'a \n', 'a\n \n b', '<|endoftext|>',
  '👩‍👩‍👧‍👦', 'é', 'e\u0301', '\u{10ffff}', '\u{e0001}', '\u{1f600}\u{1f600}']) add('edge', t)

const families = [
  ['prose', prose], ['json', json], ['code', code], ['whitespace', whitespaceRuns], ['digits', digitRuns],
  ['emoji', emojiText], ['cjk', () => script(pick(['cjk', 'hiragana', 'hangul']))], ['arabic', () => script(pick(['arabic', 'hebrew']))],
  ['indic-thai-cyrillic', () => script(pick(['devanagari', 'thai', 'cyrillic']))], ['combining', combiningMarks],
  ['bom-nel', () => sprinkle(mixed(), ['\ufeff', '\u0085', '\ufeff\ufeff', '\u0085\n', ' \ufeff', '\ufeff\n'])],
  ['specials', specialSpellings], ['contractions', contractionText], ['mixed', mixed], ['random-unicode', () => randomUnicode(1 + int(200))],
]
for (const [k, f] of families) for (let i = 0; i < 140; i++) add(k, f())
for (let i = 0; i < 40; i++) add('long-word', longWord())
// 100 KB of random Unicode across all planes, in one string.
let big = ''
while (Buffer.byteLength(big) < 100 * 1024) big += randomUnicode(1000)
add('random-unicode-100k', big)

// Every prefix of a few 3,000-code-point strings.
const prefixSources = [
  repeat(60, () => mixed()).join('\n'),
  repeat(80, () => sprinkle(prose() + pick(spaces) + digitRuns(), ['\ufeff', '\u0085', '  ', '\n'])).join(''),
  randomUnicode(3000),
  repeat(40, () => json()).join(' '),
].map((s) => [...s].slice(0, 3000).join(''))
const prefixLines = prefixSources.map((text) => {
  const cps = [...text]
  let previous = []
  const p = []
  for (let n = 0; n <= cps.length; n++) {
    const current = ids(cps.slice(0, n).join(''))
    let keep = 0
    while (keep < previous.length && keep < current.length && previous[keep] === current[keep]) keep++
    p.push([keep, current.slice(keep)])
    previous = current
  }
  return { k: 'prefixes', t: text, p }
})

const lines = [...entries, ...prefixLines].map((e) => JSON.stringify(e))
const body = lines.join('\n') + '\n'
writeFileSync(process.argv[2], body)
const strings = entries.length + prefixSources.reduce((n, s) => n + [...s].length + 1, 0)
console.log(`${strings} strings, ${body.length} chars, sha256 ${createHash('sha256').update(body).digest('hex')}`)
