//! tmp
pub mod transport;
#[allow(missing_docs, unreachable_pub, clippy::all, missing_debug_implementations)]
pub mod generated {
    include!(concat!(env!("OUT_DIR"), "/codegen.rs"));
}
