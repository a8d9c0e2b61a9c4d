//! `users.sign_in_failures`: a user's wrong passwords since its last sign-in, across
//! every server and every window, so that past a ceiling sign-in is refused outright
//! (`service::throttle::CONSECUTIVE_FAILURES_MAX`) until the user signs in again from
//! an address the guesses did not come from, or `restore-admin` resets it.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub(super) struct Migration;

#[derive(DeriveIden)]
enum Users {
    Table,
    SignInFailures,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Users::Table)
                    .add_column(
                        ColumnDef::new(Users::SignInFailures)
                            .integer()
                            .not_null()
                            .default(0),
                    )
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Users::Table)
                    .drop_column(Users::SignInFailures)
                    .to_owned(),
            )
            .await
    }
}
