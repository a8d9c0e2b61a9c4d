//! One entry of the route table: what a handler module declares ([`Entry`]), and what
//! the router matches and the service runs ([`Route`]), resolved from it once.
//!
//! A documented route's method and path are written once, in the handler's
//! `#[utoipa::path]`: the entry reaches them through the `utoipa::Path` impl that
//! annotation generates (`__path_<handler>`), so the router and the OpenAPI document
//! read the same declaration.

use super::Ctx;
use crate::auth::Access;
use crate::error::ApiError;
use crate::reply::Reply;
use http::Method;
use std::future::Future;
use std::pin::Pin;
use utoipa::openapi::path::{HttpMethod, Operation};
use utoipa::openapi::{RefOr, schema::Schema};

/// Default body limit (1 MiB).
pub(crate) const BODY_LIMIT: usize = 1 << 20;
/// Body limit of bulk routes (4 MiB).
pub(crate) const BULK_BODY_LIMIT: usize = 4 << 20;

/// What a handler returns: its answer, boxed so routes can live in tables.
pub(crate) type BoxFuture<'a> = Pin<Box<dyn Future<Output = Result<Reply, ApiError>> + Send + 'a>>;

/// A handler, as stored in a route table (see the `route!` macro).
pub(crate) type Handler = for<'a> fn(&'a Ctx<'a>) -> BoxFuture<'a>;

/// The schemas an operation's bodies name, with those they name in turn.
pub(crate) type Schemas = Vec<(String, RefOr<Schema>)>;

/// A route as a handler module declares it (with `route!`).
pub(crate) struct Entry {
    /// The handler's name, also the OpenAPI `operationId`.
    pub(crate) operation_id: &'static str,
    pub(crate) at: At,
    pub(crate) facts: Facts,
    pub(crate) handler: Handler,
}

/// Everything about a route besides where it is served and what runs: the pipeline,
/// the audit trail and the OpenAPI document each read it here, so what the document
/// declares is what the route does. A read is made with [`Facts::read`], a write with
/// [`Facts::write`], which asks what its audit entries name: no route leaves it out.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Facts {
    pub(crate) access: Access,
    /// A write that honours `If-Match` (`412` when the resource has changed).
    pub(crate) if_match: bool,
    /// A write whose success answer carries the resource's `ETag`.
    pub(crate) tagged: bool,
    /// What the write's `api.write` audit entry names (nothing for a read).
    pub(crate) audit: Audit,
    /// A read that may be held for a change (`wait=`): its time limit gets the
    /// longest wait on top.
    pub(crate) holds: bool,
    /// A bulk write: the most items its body's array holds (the document's
    /// `maxItems`; the core enforces it).
    pub(crate) bulk_items: Option<usize>,
    /// The largest body it reads.
    pub(crate) body_limit: usize,
}

/// What a write's `api.write` audit entry names as its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Audit {
    /// No one resource (a read, a sign-in, a bulk write, a booking of several shifts).
    Nothing,
    /// The resource of this kind its path's `{id}` names.
    Id(&'static str),
    /// The resource of this kind its path's second parameter names (`{deliveryId}`).
    SubId(&'static str),
    /// The resource of this kind it creates: the handler hands its id over with the
    /// answer ([`Reply::created`]).
    Created(&'static str),
}

impl Facts {
    /// A read with `access`.
    pub(crate) const fn read(access: Access) -> Self {
        Self {
            access,
            if_match: false,
            tagged: false,
            audit: Audit::Nothing,
            holds: false,
            bulk_items: None,
            body_limit: BODY_LIMIT,
        }
    }

    /// A write with `access`, whose audit entry names `audit`.
    pub(crate) const fn write(access: Access, audit: Audit) -> Self {
        Self {
            audit,
            ..Self::read(access)
        }
    }

    /// It honours `If-Match`.
    pub(crate) const fn if_match(self) -> Self {
        Self {
            if_match: true,
            ..self
        }
    }

    /// Its success answer carries the resource's `ETag`.
    pub(crate) const fn tagged(self) -> Self {
        Self {
            tagged: true,
            ..self
        }
    }

    /// It may be held for a change (`wait=`).
    pub(crate) const fn holds(self) -> Self {
        Self {
            holds: true,
            ..self
        }
    }

    /// A bulk write of at most `items` items, in a body of at most [`BULK_BODY_LIMIT`].
    pub(crate) const fn bulk(self, items: usize) -> Self {
        Self {
            bulk_items: Some(items),
            body_limit: BULK_BODY_LIMIT,
            ..self
        }
    }
}

/// Where a route is served.
pub(crate) enum At {
    /// As the handler's `#[utoipa::path]` says: an operation of the document.
    Documented(Doc),
    /// A route the document leaves out (the interactive reference's and the console's
    /// pages and assets, which are not operations of the API), so its method and path are written here.
    #[cfg_attr(
        not(any(feature = "swagger-ui", feature = "console")),
        expect(
            dead_code,
            reason = "only the API reference's and the console's pages and assets are undocumented"
        )
    )]
    Undocumented { method: Method, path: &'static str },
}

/// A handler's `#[utoipa::path]`, as functions of the `utoipa::Path` impl it generates.
pub(crate) struct Doc {
    pub(crate) path: fn() -> String,
    pub(crate) methods: fn() -> Vec<HttpMethod>,
    /// The operation, its tags included.
    pub(crate) operation: fn() -> Operation,
    pub(crate) schemas: fn(&mut Schemas),
}

impl Doc {
    /// The annotation of the handler whose generated path type is `P`. The tags and
    /// the schemas come through `utoipa::__dev`, the traits utoipa's own `OpenApi`
    /// derive reads them with (the version is pinned in the workspace).
    pub(crate) const fn of<P>() -> Self
    where
        P: utoipa::Path + for<'t> utoipa::__dev::Tags<'t> + utoipa::__dev::SchemaReferences,
    {
        Self {
            path: P::path,
            methods: P::methods,
            operation: operation_of::<P>,
            schemas: P::schemas,
        }
    }
}

/// As utoipa's `OpenApi` derive composes it: the operation, then the annotation's tags.
fn operation_of<P>() -> Operation
where
    P: utoipa::Path + for<'t> utoipa::__dev::Tags<'t>,
{
    let mut operation = P::operation();
    let tags = <P as utoipa::__dev::Tags>::tags();
    assert!(
        !tags.is_empty(),
        "{} names no tag in its #[utoipa::path]",
        P::path()
    );
    operation
        .tags
        .get_or_insert_with(Vec::new)
        .extend(tags.into_iter().map(str::to_owned));
    operation
}

/// A group of operations in the document (a handler module's): its name, which each
/// operation's `#[utoipa::path(tag = ..)]` names, and its description in the document's
/// `tags`.
#[derive(Debug)]
pub(crate) struct Tag {
    pub(crate) name: &'static str,
    pub(crate) description: &'static str,
}

/// A handler module's routes, under its tag.
pub(crate) type Table = (&'static Tag, &'static [Entry]);

/// One operation of the API, its method and path resolved from its [`Entry`].
pub(crate) struct Route {
    /// The handler's name, also the OpenAPI `operationId`.
    pub(crate) operation_id: &'static str,
    pub(crate) method: Method,
    pub(crate) path: String,
    pub(crate) facts: Facts,
    pub(crate) handler: Handler,
    /// How the document describes it: `None` only for the routes that are not part of
    /// the API itself (the interactive reference's page and assets).
    pub(crate) doc: Option<&'static Doc>,
}

impl std::fmt::Debug for Route {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} ({})", self.method, self.path, self.operation_id)
    }
}

impl Route {
    /// Whether the route writes: it then runs in a transaction with idempotency.
    pub(crate) fn writes(&self) -> bool {
        self.method != Method::GET && self.facts.access != Access::Public
    }

    /// Whether the OpenAPI document describes it.
    pub(crate) fn documented(&self) -> bool {
        self.doc.is_some()
    }
}

/// The routes of `tables`, in their order: each documented entry once per method its
/// annotation names.
pub(crate) fn resolve(tables: &[Table]) -> Vec<Route> {
    let mut routes = Vec::new();
    let entries = tables
        .iter()
        .flat_map(|(tag, table)| table.iter().map(move |entry| (*tag, entry)));
    for (tag, entry) in entries {
        let route = |method: Method, path: String, doc| Route {
            operation_id: entry.operation_id,
            method,
            path,
            facts: entry.facts,
            handler: entry.handler,
            doc,
        };
        match &entry.at {
            At::Undocumented { method, path } => {
                routes.push(route(method.clone(), (*path).to_owned(), None));
            }
            At::Documented(doc) => {
                let path = (doc.path)();
                let operation = (doc.operation)();
                assert_eq!(
                    operation.operation_id.as_deref(),
                    Some(entry.operation_id),
                    "the route of {} reads another handler's #[utoipa::path]",
                    entry.operation_id
                );
                assert_eq!(
                    operation.tags.as_deref(),
                    Some(&[tag.name.to_owned()][..]),
                    "{} is tagged otherwise than its module",
                    entry.operation_id
                );
                for method in (doc.methods)() {
                    routes.push(route(method_of(&method), path.clone(), Some(doc)));
                }
            }
        }
    }
    routes
}

fn method_of(method: &HttpMethod) -> Method {
    match method {
        HttpMethod::Get => Method::GET,
        HttpMethod::Post => Method::POST,
        HttpMethod::Put => Method::PUT,
        HttpMethod::Delete => Method::DELETE,
        HttpMethod::Options => Method::OPTIONS,
        HttpMethod::Head => Method::HEAD,
        HttpMethod::Patch => Method::PATCH,
        HttpMethod::Trace => Method::TRACE,
    }
}
