// Drops the custom `name` section (function names for stack traces: about 75 KB of gzip) from a
// release wasm, in place, leaving every other byte as it was. worker-build 0.8.7 cannot be told to
// do it: it runs wasm-opt with the Cargo.toml arguments and then always appends `--debuginfo`, which
// writes the names back (`--strip-debug` among the arguments was measured to leave all 283 KB).
// Custom sections have no semantics when the module runs, so a panic still traps into the same
// closed 5xx; only a stack trace shows `wasm-function[N]` instead of a Rust name.
//   node scripts/strip-wasm-names.mjs <module.wasm>
import { readFileSync, writeFileSync } from 'node:fs'

const [file] = process.argv.slice(2)
const wasm = readFileSync(file)
if (wasm.readUInt32LE(0) !== 0x6d736100) throw new Error(`${file}: not a wasm module`)
let at = 8
const leb = () => {
  let value = 0
  for (let shift = 0; ; shift += 7) {
    const byte = wasm[at++]
    value += (byte & 127) * 2 ** shift
    if (byte < 128) return value
  }
}
const kept = [wasm.subarray(0, 8)]
let dropped = 0
while (at < wasm.length) {
  const start = at
  const id = wasm[at++]
  const size = leb()
  const end = at + size
  let name = null
  if (id === 0) {
    const length = leb()
    name = wasm.toString('latin1', at, at + length)
  }
  if (name === 'name') dropped += end - start
  else kept.push(wasm.subarray(start, end))
  at = end
}
if (at !== wasm.length) throw new Error(`${file}: truncated section`)
writeFileSync(file, Buffer.concat(kept))
console.log(`strip-wasm-names: ${file}: dropped ${dropped} B of name section`)
