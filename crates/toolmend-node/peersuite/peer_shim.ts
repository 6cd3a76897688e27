// In-process stand-in for jsonrepair's `jsonrepair(text)`: the JS function under test (by
// default toolmend's, `TOOLMEND_JS_MODULE` names another module exporting `jsonrepair`), called
// directly instead of through a binary. Exports what ../shared/peersuites/js/peer_expect.ts
// reads from the shared peer_shim.ts (`calls`, `RepairFailure`, `JSONRepairError`), and records
// each call the same way: a thrown error is exit 1 with its message, so the shared report's
// counting and kinds apply unchanged.
import { createRequire } from 'node:module'
import { expect as vexpect } from 'vitest'

export interface PeerCall {
  test: string
  text: string
  rc: number
  ok: boolean
  stdout: string
  message: string
}

export const calls: PeerCall[] = []

export class JSONRepairError extends Error {
  position: number

  constructor(message: string, position: number) {
    super(message)
    this.position = position
  }
}

export class RepairFailure {
  constructor(public readonly message: string, public readonly rc: number) {}

  toString(): string {
    return `[function threw: ${this.message}]`
  }
}

const require = createRequire(import.meta.url)
const impl = require(process.env.TOOLMEND_JS_MODULE as string) as { jsonrepair: (text: string) => string }

export function jsonrepair(text: string): string {
  const test = vexpect.getState().currentTestName ?? '(outside a test)'
  try {
    const out = impl.jsonrepair(text)
    calls.push({ test, text, rc: 0, ok: true, stdout: out, message: '' })
    return out
  } catch (e) {
    const err = e as { message?: string; position?: number }
    const message = String(err.message ?? e)
    calls.push({ test, text, rc: 1, ok: false, stdout: '', message })
    if (process.env.PEERSUITES_THROW === '1') throw new JSONRepairError(message, err.position ?? -1)
    return new RepairFailure(message, 1) as unknown as string
  }
}
