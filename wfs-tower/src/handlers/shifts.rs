//! shifts routes.

use crate::router::Route;

pub(crate) static ROUTES: [Route; 0] = [];
