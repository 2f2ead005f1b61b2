//! x402 discovery: the `bazaar` extension every `PaymentRequired` declares, so a facilitator
//! that catalogues services can list each paid route with how to call it and what it answers
//! (x402 `specs/extensions/bazaar.md`, v2: `info` holds the values, `schema` the JSON Schema that
//! validates `info`).
//!
//! Invariants:
//! - The declaration is a pure function of the route's published schemas and examples: the same
//!   route always declares the same bytes, so the copy forwarded to the facilitator is ours, never
//!   the client's echo.
//! - `info` validates against `schema` (held by `@x402/extensions`' own `validateDiscoveryExtension`
//!   in the end-to-end suite) and the schema carries no external `$ref`/`$id` (the validator
//!   refuses those), and no nested `$schema` (a JSON Schema keyword for a document's root only).

use serde_json::{json, Map, Value};

/// The extension's key in `PaymentRequired.extensions` and `PaymentPayload.extensions`.
pub const BAZAAR: &str = "bazaar";

/// What one route publishes about itself for discovery.
#[derive(Debug, Clone, PartialEq)]
pub struct RouteListing {
    /// `resource.description`: one line on what the route sells.
    pub description: String,
    /// HTTP method (the paid routes are all `POST` with a JSON body).
    pub method: &'static str,
    /// JSON Schema of the request body.
    pub body_schema: Value,
    /// A request body that satisfies `body_schema`.
    pub body_example: Value,
    /// JSON Schema of the delivered (200) body: it constrains `info.output.example`, as the
    /// official helper places an output schema.
    pub output_schema: Value,
    /// Request headers a caller sends besides `Content-Type`, with example values.
    pub headers: Vec<(&'static str, &'static str)>,
}

/// `schema` with every `$schema` member below its root removed (the published contracts carry
/// one on nested objects; a validator may reject a meta-schema keyword away from the root).
pub fn without_nested_meta(schema: &Value) -> Value {
    fn strip(value: &Value) -> Value {
        match value {
            Value::Object(map) => Value::Object(
                map.iter()
                    .filter(|(k, _)| k.as_str() != "$schema")
                    .map(|(k, v)| (k.clone(), strip(v)))
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(strip).collect()),
            other => other.clone(),
        }
    }
    strip(schema)
}

/// The `bazaar` extension object (`{info, schema}`) for one body-method route.
pub fn bazaar_declaration(listing: &RouteListing) -> Value {
    let headers: Map<String, Value> = listing
        .headers
        .iter()
        .map(|(name, example)| ((*name).to_owned(), Value::from(*example)))
        .collect();
    json!({
        "info": {
            "input": {
                "type": "http",
                "method": listing.method,
                "bodyType": "json",
                "body": listing.body_example,
                "headers": headers,
            },
            "output": { "type": "json", "format": "application/json" },
        },
        "schema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "input": {
                    "type": "object",
                    "properties": {
                        "type": { "type": "string", "const": "http" },
                        "method": { "type": "string", "enum": ["POST", "PUT", "PATCH"] },
                        "bodyType": { "type": "string", "enum": ["json", "form-data", "text"] },
                        "body": without_nested_meta(&listing.body_schema),
                        "headers": { "type": "object", "additionalProperties": { "type": "string" } },
                    },
                    "required": ["type", "method", "bodyType", "body"],
                    "additionalProperties": false,
                },
                "output": {
                    "type": "object",
                    "properties": {
                        "type": { "type": "string" },
                        "format": { "type": "string" },
                        "example": without_nested_meta(&listing.output_schema),
                    },
                    "required": ["type"],
                },
            },
            "required": ["input"],
        },
    })
}

/// The JSON Schema an MCP tool's `info` satisfies (text: data, not code, in the bundle).
const MCP_DECLARATION_SCHEMA: &str = r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"input":{"type":"object","properties":{"type":{"type":"string","const":"mcp"},"toolName":{"type":"string"},"description":{"type":"string"},"transport":{"type":"string","enum":["streamable-http"]},"inputSchema":{"type":"object"},"example":{"type":"object"}},"required":["type","toolName","inputSchema"],"additionalProperties":false},"output":{"type":"object","properties":{"type":{"type":"string"},"example":{"type":"object"}},"required":["type"]}},"required":["input"]}"#;

/// The `bazaar` extension object for a paid MCP tool (`info.input.type: "mcp"`, its `toolName`
/// and `inputSchema`, Streamable HTTP), in the shape @x402/extensions 2.27.0 declares and checks
/// (`toolName`, where the bazaar spec's prose says `tool`; the SDKs' validators refuse `tool`).
pub fn mcp_declaration(
    tool: &str,
    description: &str,
    input_schema: Value,
    example: Value,
) -> Value {
    json!({
        "info": {
            "input": {
                "type": "mcp",
                "toolName": tool,
                "description": description,
                "transport": "streamable-http",
                "inputSchema": without_nested_meta(&input_schema),
                "example": example,
            },
            "output": { "type": "json" },
        },
        "schema": serde_json::from_str::<Value>(MCP_DECLARATION_SCHEMA).unwrap_or(Value::Null),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing() -> RouteListing {
        RouteListing {
            description: "d".into(),
            method: "POST",
            body_schema: json!({"$schema": "x", "type": "object", "properties": {"a": {"$schema": "y", "type": "integer"}}}),
            body_example: json!({"a": 1}),
            output_schema: json!({"type": "object"}),
            headers: vec![("Idempotency-Key", "k")],
        }
    }

    #[test]
    fn the_declaration_carries_the_method_body_and_schemas() {
        let declared = bazaar_declaration(&listing());
        assert_eq!(declared["info"]["input"]["method"], "POST");
        assert_eq!(declared["info"]["input"]["body"], json!({"a": 1}));
        assert_eq!(declared["info"]["input"]["headers"]["Idempotency-Key"], "k");
        let body = &declared["schema"]["properties"]["input"]["properties"]["body"];
        assert_eq!(
            body,
            &json!({"type": "object", "properties": {"a": {"type": "integer"}}})
        );
        assert_eq!(
            declared["schema"]["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
    }
}
