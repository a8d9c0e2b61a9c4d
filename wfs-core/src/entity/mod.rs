//! sea-orm entities: one module per table. They import nothing of the crate, so every module that reads rows (`persistence`, `resource`, the services) may sit above them.
#![allow(missing_docs)]

/// Declares the entity modules, and [`tables`] from them.
macro_rules! entities {
    ($($module:ident),* $(,)?) => {
        $(pub mod $module;)*

        /// Every table wfs owns, one per entity module, as its entity names it (a test
        /// compares them with what the migrations create): what an upgrade moves into
        /// wfs's schema, and what a schema may not be called.
        pub(crate) fn tables() -> impl Iterator<Item = &'static str> {
            [$(sea_orm::EntityName::table_name(&$module::Entity)),*].into_iter()
        }
    };
}

entities! {
    api_key,
    audit_entry,
    company,
    idempotency_record,
    job_role,
    location,
    member_skill,
    membership,
    membership_tombstone,
    outbox,
    overtime_record,
    shift,
    shift_slot,
    skill_set,
    unavailability,
    user,
    webhook_delivery,
    webhook_endpoint,
    webhook_event,
}
