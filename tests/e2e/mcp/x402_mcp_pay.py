"""Pays one x402-priced MCP tool with the official x402 Python SDK, as a stock MCP client would.

The stock pieces, nothing of our own in the payment path: mcp's Streamable HTTP client
(`mcp.client.streamable_http.streamable_http_client`) and `mcp.ClientSession`, wrapped in
`x402.mcp.x402MCPSession` with an `x402.x402Client` holding the SDK's `exact` scheme for the key's
chain (EVM: EIP-3009 via eth-account; Solana: a partially signed SPL transfer). The session calls
the tool, reads the payment-required tool result, signs, retries with `_meta["x402/payment"]` and
reads `_meta["x402/payment-response"]`.

Environment:
  SERVER_URL       the MCP endpoint (http://127.0.0.1:PORT/mcp)
  TOOL             the tool's name
  ARGS             the tool's arguments (a JSON object; default {})
  PRIVATE_KEY      EVM hex key (0x + 64 hex) -> eip155:*, else a Solana base58 64-byte keypair -> solana:*
  SOLANA_RPC_URL   optional: the RPC the Solana scheme reads the mint from
  PREFER_NETWORK   optional: a CAIP-2 network the SDK's prefer_network policy puts first
  IDEMPOTENCY_KEY  optional: sent as the Idempotency-Key header on every HTTP request of the connection

Prints one JSON line:
  {is_error, payment_made, payment_response, structured, text, meta, payment_sent, payer}
where structured is the result's structuredContent, text its content[0].text, meta its _meta, and payment_sent the
`_meta["x402/payment"]` exactly as it went over the wire (read back from the HTTP request body), so
a test can present the same payment again. Exit status 0 when the call was delivered, 1 when not.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys


def payment_client(private_key: str):
    """An x402Client with the SDK's exact scheme for the key's chain, and the payer's address."""
    from x402 import prefer_network, x402Client

    client = x402Client()
    if re.fullmatch(r"(0x)?[0-9a-fA-F]{64}", private_key):
        from eth_account import Account
        from x402.mechanisms.evm.exact import register_exact_evm_client
        from x402.mechanisms.evm.signers import EthAccountSigner

        account = Account.from_key(private_key)
        register_exact_evm_client(client, EthAccountSigner(account))
        payer = account.address
    else:
        from x402.mechanisms.svm import KeypairSigner
        from x402.mechanisms.svm.exact import register_exact_svm_client

        signer = KeypairSigner.from_base58(private_key)
        register_exact_svm_client(client, signer, rpc_url=os.environ.get("SOLANA_RPC_URL") or None)
        payer = signer.address
    if os.environ.get("PREFER_NETWORK"):
        client.register_policy(prefer_network(os.environ["PREFER_NETWORK"]))
    return client, payer


def dump(value):
    """A pydantic model (or a plain value) as JSON-ready data."""
    if hasattr(value, "model_dump"):
        return value.model_dump(by_alias=True, mode="json")
    return value


async def call(server_url: str, tool: str, arguments: dict, private_key: str, key: str | None) -> dict:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    from x402.mcp import MCP_PAYMENT_META_KEY, x402MCPSession

    client, payer = payment_client(private_key)
    sent: list[dict] = []

    async def record(request):
        # Every JSON-RPC request body this connection POSTs; the paid retry's _meta is read back from it.
        if request.method == "POST":
            try:
                sent.append(json.loads(request.content))
            except ValueError:
                pass

    headers = {"Idempotency-Key": key} if key else None
    http = create_mcp_http_client(headers=headers)
    http.event_hooks["request"].append(record)
    async with http:
        async with streamable_http_client(server_url, http_client=http) as (read, write, _):
            async with ClientSession(read, write) as session:
                paying = x402MCPSession(session, client, auto_payment=True)
                await paying.initialize()
                result = await paying.call_tool(tool, arguments)

    paid = [
        m["params"]["_meta"][MCP_PAYMENT_META_KEY]
        for m in sent
        if isinstance(m, dict)
        and m.get("method") == "tools/call"
        and MCP_PAYMENT_META_KEY in ((m.get("params") or {}).get("_meta") or {})
    ]
    raw = result.raw_result
    content = result.content or []
    return {
        "is_error": bool(result.is_error),
        "payment_made": bool(result.payment_made),
        "payment_response": dump(result.payment_response),
        "structured": getattr(raw, "structuredContent", None),
        "meta": getattr(raw, "meta", None),
        "text": getattr(content[0], "text", None) if content else None,
        "payment_sent": paid[-1] if paid else None,
        "payer": payer,
    }


def main() -> int:
    out = asyncio.run(
        call(
            os.environ["SERVER_URL"],
            os.environ["TOOL"],
            json.loads(os.environ.get("ARGS") or "{}"),
            os.environ["PRIVATE_KEY"],
            os.environ.get("IDEMPOTENCY_KEY") or None,
        )
    )
    print(json.dumps(out, separators=(",", ":")))
    return 1 if out["is_error"] else 0


if __name__ == "__main__":
    sys.exit(main())
