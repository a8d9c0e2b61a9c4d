//! Typed client for the wfs workforce scheduling API.
//!
//! Not yet generated: the client is built from `openapi.yaml` (the document the
//! server's utoipa annotations emit) in a later step. Until then use any HTTP client
//! with the headers described in the README.
