/// tmp
#[derive(Debug, Clone)]
pub struct Transport;
impl progenitor_client::ClientHooks<Transport> for crate::generated::Client {}
