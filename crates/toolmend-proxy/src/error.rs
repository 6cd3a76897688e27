//! The proxy's own errors, as JSON in the client API's error shape.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// A configuration value that could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("configuration: {0}")]
pub struct ConfigError(pub(crate) String);

/// The API a route speaks, which decides its body shapes and its error shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Api {
    /// OpenAI Chat Completions; errors `{"error": {"message", "type", "code"}}`.
    OpenAi,
    /// Anthropic Messages; errors `{"type": "error", "error": {"type", "message"}}`.
    Anthropic,
    /// OpenAI Responses; errors in OpenAI's shape.
    Responses,
    /// Ollama's native API (`/api/…`); errors `{"error": "message"}`.
    Ollama,
}

impl Api {
    /// The API of a request path: Anthropic for `/v1/messages…`, Ollama for `/api/…`,
    /// Responses for `/v1/responses…`, else OpenAI's shape (which most OpenAI-compatible
    /// servers use for every path).
    pub(crate) fn of_path(path: &str) -> Self {
        if path.starts_with("/v1/messages") || path.starts_with("/messages") {
            Self::Anthropic
        } else if path.starts_with("/api/") {
            Self::Ollama
        } else if path.starts_with("/v1/responses") {
            Self::Responses
        } else {
            Self::OpenAi
        }
    }

    /// The route's label in spans and metrics.
    pub(crate) fn route_label(self) -> &'static str {
        match self {
            Self::OpenAi => "chat",
            Self::Anthropic => "messages",
            Self::Responses => "responses",
            Self::Ollama => "ollama_chat",
        }
    }
}

/// An error the proxy itself answers with (upstream errors pass through as received).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum ProxyError {
    #[error("request body is larger than {0} bytes")]
    RequestTooLarge(usize),
    #[error("could not read the request body: {0}")]
    BadRequestBody(String),
    #[error("missing or wrong API key")]
    Unauthorized,
    #[error("too many requests in flight (at most {0})")]
    Overloaded(usize),
    #[error("upstream did not answer in time")]
    UpstreamTimeout,
    #[error("upstream unreachable: {0}")]
    UpstreamUnreachable(String),
    #[error("the request path climbs above the upstream root")]
    PathEscapes,
    #[error("the request body arrived too slowly")]
    BodyTimeout,
    #[error("this path is not forwarded with the upstream key (see --allow-paths)")]
    PathNotAllowed,
    #[error("the `tools` array is larger than {0} bytes")]
    ToolsTooLarge(usize),
}

impl ProxyError {
    fn status(&self) -> StatusCode {
        match self {
            Self::RequestTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::BadRequestBody(_) => StatusCode::BAD_REQUEST,
            Self::Unauthorized => StatusCode::UNAUTHORIZED,
            Self::Overloaded(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::UpstreamTimeout => StatusCode::GATEWAY_TIMEOUT,
            Self::UpstreamUnreachable(_) => StatusCode::BAD_GATEWAY,
            Self::PathEscapes => StatusCode::BAD_REQUEST,
            Self::BodyTimeout => StatusCode::REQUEST_TIMEOUT,
            Self::PathNotAllowed => StatusCode::FORBIDDEN,
            Self::ToolsTooLarge(_) => StatusCode::BAD_REQUEST,
        }
    }

    fn code(&self) -> &'static str {
        match self {
            Self::RequestTooLarge(_) => "request_too_large",
            Self::BadRequestBody(_) => "invalid_request_error",
            Self::Unauthorized => "authentication_error",
            Self::Overloaded(_) => "overloaded_error",
            Self::UpstreamTimeout => "upstream_timeout",
            Self::UpstreamUnreachable(_) => "upstream_unreachable",
            Self::PathEscapes => "invalid_request_error",
            Self::BodyTimeout => "request_timeout",
            Self::PathNotAllowed => "permission_error",
            Self::ToolsTooLarge(_) => "invalid_request_error",
        }
    }

    /// The error as a response in `api`'s error shape.
    pub(crate) fn into_api_response(self, api: Api) -> Response {
        let message = format!("toolmend: {self}");
        let body = match api {
            Api::OpenAi | Api::Responses => json!({"error": {
                "message": message, "type": self.code(), "code": self.code(), "param": null}}),
            Api::Ollama => json!({"error": message}),
            Api::Anthropic => json!({"type": "error", "error": {
                "type": self.code(), "message": message}}),
        };
        let mut response = (self.status(), body.to_string()).into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_follow_the_api() {
        let r = ProxyError::Overloaded(3).into_api_response(Api::Anthropic);
        assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(Api::of_path("/v1/messages"), Api::Anthropic);
        assert_eq!(Api::of_path("/v1/chat/completions"), Api::OpenAi);
        assert_eq!(Api::of_path("/api/chat"), Api::Ollama);
        assert_eq!(Api::of_path("/v1/responses"), Api::Responses);
    }
}
