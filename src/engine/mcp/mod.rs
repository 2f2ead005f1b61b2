//! MCP's JSON-RPC framing, pure (ARCHITECTURE §4b): one request message in, its method and
//! parameters out, and the response envelope back. Stateless: a Worker isolate keeps no session,
//! so every message carries all it needs (the `2026-07-28` revision's per-request `_meta`) or needs
//! nothing (an earlier revision's `initialize` is answered, and forgotten).
//!
//! Invariants: nothing of a message is rendered into an error (closed messages, numbers only); a
//! request's `id` is echoed only when it is an integer or a short printable string (JSON-RPC
//! requires the echo; anything else is an invalid request answered with `id: null`); tool arguments
//! stay the exact bytes the client sent (`RawValue`), so a tool runs on the body its HTTP route
//! would have received, byte for byte.

pub mod pay;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

/// The revisions served, newest first. `initialize` answers the client's revision when it is one
/// of these, else the newest one a session can use ([`SESSION_LATEST`]).
pub const VERSIONS: [&str; 4] = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"];

/// The newest revision that has an `initialize` handshake.
pub const SESSION_LATEST: &str = "2025-11-25";

/// The stateless revision: no `initialize`; each request names its revision in `_meta`.
pub const STATELESS: &str = "2026-07-28";

/// The `_meta` key of a stateless request's revision.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// The `_meta` key of a stateless request's client capabilities (required with the revision).
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// The `_meta` key of the server's name and version on a stateless result.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// Longest string `id` echoed back.
const ID_MAX_BYTES: usize = 128;

/// A JSON-RPC request id: echoed in the response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Id {
    Number(i64),
    Text(String),
}

impl Id {
    fn to_value(&self) -> Value {
        match self {
            Id::Number(n) => Value::from(*n),
            Id::Text(s) => Value::from(s.as_str()),
        }
    }
}

/// The closed JSON-RPC errors of `/mcp`: code, static message, numbers as data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RpcError {
    /// Not JSON, or not an object.
    Parse,
    /// Not a JSON-RPC 2.0 request (or a batch, which MCP no longer admits).
    InvalidRequest,
    MethodNotFound,
    /// The method's parameters do not have the method's shape (a stateless request's `_meta`
    /// included).
    InvalidParams,
    /// `tools/call` named no tool this server has.
    UnknownTool,
    /// The request's revision is not served.
    UnsupportedVersion,
    /// A stateless request's `MCP-Protocol-Version`, `Mcp-Method` or `Mcp-Name` header is missing
    /// or disagrees with its body.
    HeaderMismatch,
    /// A browser request from an origin this server does not serve (DNS rebinding guard).
    OriginForbidden,
    /// The request body is over the endpoint's cap.
    TooLarge {
        cap: u64,
    },
    /// The tool could not be run (a runtime failure; nothing was charged).
    Internal,
}

impl RpcError {
    pub fn code(self) -> i64 {
        match self {
            RpcError::Parse => -32700,
            RpcError::InvalidRequest | RpcError::TooLarge { .. } | RpcError::OriginForbidden => {
                -32600
            }
            RpcError::MethodNotFound => -32601,
            RpcError::InvalidParams | RpcError::UnknownTool => -32602,
            RpcError::Internal => -32603,
            RpcError::HeaderMismatch => -32020,
            RpcError::UnsupportedVersion => -32022,
        }
    }

    pub fn message(self) -> &'static str {
        match self {
            RpcError::Parse => "parse error: the body is not one JSON object",
            RpcError::InvalidRequest => "invalid request: not a JSON-RPC 2.0 request object",
            RpcError::MethodNotFound => "method not found",
            RpcError::InvalidParams => "invalid params for this method",
            RpcError::UnknownTool => "unknown tool: tools/list names every tool",
            RpcError::UnsupportedVersion => "unsupported protocol version",
            RpcError::HeaderMismatch => {
                "header mismatch: MCP-Protocol-Version, Mcp-Method and Mcp-Name must match the body"
            }
            RpcError::OriginForbidden => "forbidden origin",
            RpcError::TooLarge { .. } => "request body over the endpoint's cap",
            RpcError::Internal => "internal error; nothing was charged",
        }
    }

    /// The HTTP status the error travels with: a transport-level refusal is 4xx, an error of a
    /// method's handling 200 (a stateless request's unknown method is 404, as its revision says).
    pub fn status(self, stateless: bool) -> u16 {
        match self {
            RpcError::Parse
            | RpcError::InvalidRequest
            | RpcError::HeaderMismatch
            | RpcError::UnsupportedVersion => 400,
            RpcError::InvalidParams if stateless => 400,
            RpcError::MethodNotFound if stateless => 404,
            RpcError::OriginForbidden => 403,
            RpcError::TooLarge { .. } => 413,
            _ => 200,
        }
    }

    fn data(self) -> Option<Value> {
        match self {
            RpcError::TooLarge { cap } => Some(json!({ "cap_bytes": cap })),
            RpcError::UnsupportedVersion => Some(json!({ "supported": VERSIONS })),
            _ => None,
        }
    }
}

/// What a message asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Initialize,
    /// `server/discover` (stateless revision): what `initialize` would have said.
    Discover,
    Ping,
    ToolsList,
    ToolsCall,
    /// Any notification (no id): acknowledged with 202 and no body.
    Notification,
}

/// One parsed request message.
#[derive(Debug)]
pub struct Message<'a> {
    pub id: Option<Id>,
    pub method: Method,
    /// The method's name as sent: checked against the `Mcp-Method` header.
    pub method_name: String,
    pub params: Option<Params<'a>>,
    /// The stateless revision the request names in `params._meta`, if any.
    pub version: Option<String>,
}

/// A member kept as its raw text when present, `null` included (an `Option` would read `null` as
/// absent, and a request's `id: null` must be refused, not taken for a notification).
#[derive(Debug, Default, Clone, Copy)]
struct Raw<'a>(Option<&'a RawValue>);

impl<'de: 'a, 'a> Deserialize<'de> for Raw<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        <&'a RawValue>::deserialize(deserializer).map(|raw| Raw(Some(raw)))
    }
}

/// The message as read in one pass over its bytes: the arguments are borrowed, never re-scanned.
#[derive(Deserialize)]
struct Wire<'a> {
    jsonrpc: Option<String>,
    #[serde(default, borrow)]
    id: Raw<'a>,
    method: Option<String>,
    #[serde(borrow)]
    params: Option<Params<'a>>,
    #[serde(default, borrow)]
    result: Raw<'a>,
    #[serde(default, borrow)]
    error: Raw<'a>,
}

/// The members of `params` any served method reads (`tools/call`'s name, arguments and `_meta`;
/// `initialize`'s revision); the rest are skipped.
#[derive(Debug, Default, Deserialize)]
pub struct Params<'a> {
    name: Option<String>,
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
    #[serde(rename = "_meta")]
    meta: Option<Map<String, Value>>,
    #[serde(rename = "protocolVersion")]
    protocol_version: Option<String>,
}

/// A message refused: the error, the id when one could be read, and whether the message was a
/// stateless one (its revision answers some errors with another status).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub error: RpcError,
    pub id: Option<Id>,
    pub stateless: bool,
}

impl RpcError {
    fn with(self, id: Option<Id>, stateless: bool) -> Refusal {
        Refusal {
            error: self,
            id,
            stateless,
        }
    }
}

/// Reads one JSON-RPC message, in one pass over its bytes.
pub fn parse(body: &[u8]) -> Result<Message<'_>, Refusal> {
    let trimmed = body.trim_ascii_start();
    if trimmed.first() == Some(&b'[') {
        return Err(RpcError::InvalidRequest.with(None, false));
    }
    let wire: Wire = match serde_json::from_slice(body) {
        Ok(wire) => wire,
        // JSON of another shape (a params that is not an object, a member of the wrong type) is
        // an invalid request; anything else does not parse.
        Err(_) => {
            let json = serde_json::from_slice::<serde::de::IgnoredAny>(body).is_ok();
            let error = if json {
                RpcError::InvalidRequest
            } else {
                RpcError::Parse
            };
            return Err(error.with(None, false));
        }
    };
    let id = match wire.id.0 {
        None => None,
        Some(raw) => Some(read_id(raw).ok_or(RpcError::InvalidRequest.with(None, false))?),
    };
    if wire.jsonrpc.as_deref() != Some("2.0") {
        return Err(RpcError::InvalidRequest.with(id, false));
    }
    let version = match &wire.params {
        Some(params) => stateless_version(params).map_err(|e| e.with(id.clone(), true))?,
        None => None,
    };
    let stateless = version.is_some();
    let Some(method_name) = wire.method else {
        // A client's response to a server request (never asked here): accepted, as a notification.
        if id.is_some() && (wire.result.0.is_some() || wire.error.0.is_some()) {
            return Ok(Message {
                id: None,
                method: Method::Notification,
                method_name: String::new(),
                params: None,
                version,
            });
        }
        return Err(RpcError::InvalidRequest.with(id, stateless));
    };
    let method = match (&id, method_name.as_str()) {
        (None, _) => Method::Notification,
        (Some(_), "initialize") => Method::Initialize,
        (Some(_), "server/discover") => Method::Discover,
        (Some(_), "ping") => Method::Ping,
        (Some(_), "tools/list") => Method::ToolsList,
        (Some(_), "tools/call") => Method::ToolsCall,
        (Some(_), _) => return Err(RpcError::MethodNotFound.with(id, stateless)),
    };
    Ok(Message {
        id,
        method,
        method_name,
        params: wire.params,
        version,
    })
}

/// The revision a stateless request names in `params._meta`: None for an earlier revision's
/// request; refused when named but not served, or without the client capabilities it must carry.
fn stateless_version(params: &Params) -> Result<Option<String>, RpcError> {
    let Some(meta) = &params.meta else {
        return Ok(None);
    };
    let version = match meta.get(META_PROTOCOL_VERSION) {
        None => return Ok(None),
        Some(Value::String(v)) => v,
        Some(_) => return Err(RpcError::InvalidParams),
    };
    if !VERSIONS.contains(&version.as_str()) {
        return Err(RpcError::UnsupportedVersion);
    }
    if !meta
        .get(META_CLIENT_CAPABILITIES)
        .is_some_and(Value::is_object)
    {
        return Err(RpcError::InvalidParams);
    }
    Ok(Some(version.clone()))
}

/// The transport headers a message came with.
#[derive(Debug, Default, Clone, Copy)]
pub struct Headers<'a> {
    pub protocol_version: Option<&'a str>,
    pub method: Option<&'a str>,
    pub name: Option<&'a str>,
}

/// Checks the headers against the message: a stateless request must repeat its revision, method
/// and (for `tools/call`) tool name in them; an earlier revision's request may name a served
/// revision only, and not the stateless one (its body would then lack the stateless envelope).
pub fn check_headers(
    message: &Message,
    tool: Option<&str>,
    headers: Headers,
) -> Result<(), RpcError> {
    let Some(version) = &message.version else {
        return match headers.protocol_version {
            Some(STATELESS) => Err(RpcError::HeaderMismatch),
            Some(v) if !VERSIONS.contains(&v) => Err(RpcError::UnsupportedVersion),
            _ => Ok(()),
        };
    };
    if message.method == Method::Notification {
        return Ok(());
    }
    let name_matches = match (tool, headers.name) {
        (None, _) => true,
        (Some(tool), Some(sent)) => decoded_header(sent).as_deref() == Some(tool),
        (Some(_), None) => false,
    };
    if headers.protocol_version != Some(version.as_str())
        || headers.method != Some(message.method_name.as_str())
        || !name_matches
    {
        return Err(RpcError::HeaderMismatch);
    }
    Ok(())
}

/// A header value as sent, or decoded from its `=?base64?…?=` form.
fn decoded_header(value: &str) -> Option<String> {
    use base64::{engine::general_purpose::STANDARD, Engine as _};
    match value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    {
        Some(encoded) => String::from_utf8(STANDARD.decode(encoded).ok()?).ok(),
        None => Some(value.to_owned()),
    }
}

/// An id is an integer or a short string of printable ASCII; anything else is refused, never
/// echoed.
fn read_id(raw: &RawValue) -> Option<Id> {
    match serde_json::from_str::<Value>(raw.get()).ok()? {
        Value::Number(n) => n.as_i64().map(Id::Number),
        Value::String(s)
            if s.len() <= ID_MAX_BYTES && s.bytes().all(|b| (0x20..0x7f).contains(&b)) =>
        {
            Some(Id::Text(s))
        }
        _ => None,
    }
}

/// `tools/call`'s parameters: the tool's name, its arguments as sent, and the payment members of
/// `_meta` (each rail's credential, as sent).
#[derive(Debug)]
pub struct ToolCall<'a> {
    pub name: String,
    pub arguments: Option<&'a RawValue>,
    pub meta: Map<String, Value>,
}

/// Reads `tools/call`'s parameters; `arguments` must be an object when present.
pub fn tool_call<'a>(params: Option<&Params<'a>>) -> Result<ToolCall<'a>, RpcError> {
    let params = params.ok_or(RpcError::InvalidParams)?;
    let name = params.name.clone().ok_or(RpcError::InvalidParams)?;
    if params
        .arguments
        .is_some_and(|a| !a.get().trim_start().starts_with('{'))
    {
        return Err(RpcError::InvalidParams);
    }
    Ok(ToolCall {
        name,
        arguments: params.arguments,
        meta: params.meta.clone().unwrap_or_default(),
    })
}

/// The revision `initialize` answers: the client's when served, else the newest with a session.
pub fn negotiate(params: Option<&Params>) -> &'static str {
    let asked = params.and_then(|p| p.protocol_version.as_deref());
    VERSIONS
        .into_iter()
        .filter(|v| *v != STATELESS)
        .find(|v| asked == Some(*v))
        .unwrap_or(SESSION_LATEST)
}

/// A success response. A stateless request's result also says it is complete (`resultType`).
pub fn result(id: &Id, mut result: Map<String, Value>, stateless: bool) -> Value {
    if stateless {
        result.insert("resultType".into(), Value::from("complete"));
    }
    json!({ "jsonrpc": "2.0", "id": id.to_value(), "result": Value::Object(result) })
}

/// How long a client may keep `tools/list` and `server/discover` (the tools change only with a
/// deployment), and that they are the same for every caller.
pub const LIST_TTL_MS: u64 = 3_600_000;

/// Marks a listing result cacheable (stateless revision: `ttlMs`, `cacheScope`).
pub fn cacheable(result: &mut Map<String, Value>) {
    result.insert("ttlMs".into(), Value::from(LIST_TTL_MS));
    result.insert("cacheScope".into(), Value::from("public"));
}

/// `initialize`'s result: the negotiated revision, the tools capability, who we are.
pub fn initialize_result(version: &str, server: Value, instructions: &str) -> Map<String, Value> {
    let mut result = Map::new();
    result.insert("protocolVersion".into(), Value::from(version));
    result.insert(
        "capabilities".into(),
        json!({"tools": {"listChanged": false}}),
    );
    result.insert("serverInfo".into(), server);
    result.insert("instructions".into(), Value::from(instructions));
    result
}

/// `server/discover`'s result: every served revision, the tools capability, who we are.
pub fn discover_result(server: Value, instructions: &str) -> Map<String, Value> {
    let mut result = Map::new();
    result.insert("supportedVersions".into(), json!(VERSIONS));
    result.insert(
        "capabilities".into(),
        json!({"tools": {"listChanged": false}}),
    );
    result.insert("instructions".into(), Value::from(instructions));
    result.insert("_meta".into(), json!({ META_SERVER_INFO: server }));
    cacheable(&mut result);
    result
}

/// An error response: the closed code and message, numbers as data, the id when known.
pub fn error(id: Option<&Id>, err: RpcError) -> Value {
    let mut error = json!({ "code": err.code(), "message": err.message() });
    if let Some(data) = err.data() {
        error["data"] = data;
    }
    json!({
        "jsonrpc": "2.0",
        "id": id.map_or(Value::Null, Id::to_value),
        "error": error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_tools_call_with_its_arguments_byte_for_byte() {
        let body = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t","arguments":{"b":1.0,"a":[2e0]},"_meta":{"x402/payment":{"x":1}}}}"#;
        let message = parse(body).unwrap();
        assert_eq!(message.id, Some(Id::Number(7)));
        assert_eq!(message.method, Method::ToolsCall);
        let call = tool_call(message.params.as_ref()).unwrap();
        assert_eq!(call.name, "t");
        assert_eq!(call.arguments.unwrap().get(), r#"{"b":1.0,"a":[2e0]}"#);
        assert!(call.meta.contains_key("x402/payment"));
    }

    #[test]
    fn refuses_without_echoing_anything_it_should_not() {
        // A batch, a wrong jsonrpc, a long or structured id, an unknown method.
        let refused = |body: &[u8]| {
            let r = parse(body).unwrap_err();
            (r.error, r.id)
        };
        assert_eq!(refused(b"[{}]").0, RpcError::InvalidRequest);
        assert_eq!(refused(b"{not json").0, RpcError::Parse);
        let wrong = refused(br#"{"jsonrpc":"1.0","id":"a","method":"ping"}"#);
        assert_eq!(
            wrong,
            (RpcError::InvalidRequest, Some(Id::Text("a".into())))
        );
        let long = format!(
            r#"{{"jsonrpc":"2.0","id":"{}","method":"ping"}}"#,
            "x".repeat(129)
        );
        assert_eq!(refused(long.as_bytes()), (RpcError::InvalidRequest, None));
        let object = refused(br#"{"jsonrpc":"2.0","id":{"canary":1},"method":"ping"}"#);
        assert_eq!(object, (RpcError::InvalidRequest, None));
        let unknown = refused(br#"{"jsonrpc":"2.0","id":1,"method":"canary/x"}"#);
        assert_eq!(unknown, (RpcError::MethodNotFound, Some(Id::Number(1))));
        let rendered = error(unknown.1.as_ref(), unknown.0).to_string();
        assert!(!rendered.contains("canary"));
    }

    #[test]
    fn a_message_without_id_is_a_notification() {
        let m = parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap();
        assert_eq!(m.method, Method::Notification);
        assert!(m.id.is_none());
    }

    #[test]
    fn a_posted_response_is_accepted_like_a_notification() {
        let m = parse(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#).unwrap();
        assert_eq!(m.method, Method::Notification);
    }

    const STATELESS_LIST: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

    #[test]
    fn a_stateless_request_names_a_served_revision_and_its_capabilities() {
        assert_eq!(
            parse(STATELESS_LIST).unwrap().version.as_deref(),
            Some(STATELESS)
        );
        let old = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2024-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
        let refused = parse(old).unwrap_err();
        assert_eq!(
            (refused.error, refused.stateless),
            (RpcError::UnsupportedVersion, true)
        );
        assert_eq!(refused.error.status(true), 400);
        let bare = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        let refused = parse(bare).unwrap_err();
        assert_eq!(refused.error, RpcError::InvalidParams);
        assert_eq!(refused.error.status(refused.stateless), 400);
        let unknown = br#"{"jsonrpc":"2.0","id":1,"method":"x/y","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
        let refused = parse(unknown).unwrap_err();
        assert_eq!(refused.error.status(refused.stateless), 404);
    }

    #[test]
    fn a_stateless_request_repeats_its_revision_method_and_tool_in_headers() {
        let message = parse(STATELESS_LIST).unwrap();
        let sent = Headers {
            protocol_version: Some(STATELESS),
            method: Some("tools/call"),
            name: Some("t"),
        };
        assert_eq!(check_headers(&message, Some("t"), sent), Ok(()));
        let encoded = Headers {
            name: Some("=?base64?dA==?="),
            ..sent
        };
        assert_eq!(check_headers(&message, Some("t"), encoded), Ok(()));
        for wrong in [
            Headers {
                name: Some("u"),
                ..sent
            },
            Headers { name: None, ..sent },
            Headers {
                method: Some("tools/list"),
                ..sent
            },
            Headers {
                protocol_version: Some("2025-11-25"),
                ..sent
            },
        ] {
            assert_eq!(
                check_headers(&message, Some("t"), wrong),
                Err(RpcError::HeaderMismatch)
            );
        }
        // An earlier revision's request: a served header or none; never the stateless one.
        let legacy = parse(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#).unwrap();
        let header = |v| Headers {
            protocol_version: v,
            ..Headers::default()
        };
        assert_eq!(check_headers(&legacy, None, header(None)), Ok(()));
        assert_eq!(
            check_headers(&legacy, None, header(Some("2025-06-18"))),
            Ok(())
        );
        let unsupported = check_headers(&legacy, None, header(Some("1999-01-01")));
        assert_eq!(unsupported, Err(RpcError::UnsupportedVersion));
        let mixed = check_headers(&legacy, None, header(Some(STATELESS)));
        assert_eq!(mixed, Err(RpcError::HeaderMismatch));
    }

    #[test]
    fn initialize_answers_the_clients_revision_or_the_latest_with_a_session() {
        let asked = |v: &str| {
            let params = Params {
                protocol_version: Some(v.to_owned()),
                ..Params::default()
            };
            negotiate(Some(&params))
        };
        assert_eq!(asked("2025-06-18"), "2025-06-18");
        assert_eq!(asked("2025-11-25"), "2025-11-25");
        assert_eq!(asked("2099-01-01"), SESSION_LATEST);
        assert_eq!(asked(STATELESS), SESSION_LATEST);
    }

    #[test]
    fn a_stateless_result_says_it_is_complete() {
        let r = result(&Id::Text("a".into()), Map::new(), true);
        assert_eq!(r["result"]["resultType"], "complete");
        assert_eq!(r["id"], "a");
        assert!(result(&Id::Number(1), Map::new(), false)["result"]
            .get("resultType")
            .is_none());
    }
}
