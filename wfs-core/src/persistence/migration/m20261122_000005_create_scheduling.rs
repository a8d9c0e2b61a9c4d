use super::{ddl, fk_company};
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub(super) struct Migration;

#[derive(DeriveIden)]
enum ShiftSlots {
    Table,
    Id,
    CompanyId,
    BranchId,
    JobRoleId,
    StartTime,
    EndTime,
    DayOfWeek,
    MaxStaffRequired,
    TimeZone,
    Hours,
    ShiftName,
    ShiftColor,
    OpenShift,
    IsOncall,
    UnpaidBreak,
    Swappable,
    WriteUp,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum Shifts {
    Table,
    Id,
    CompanyId,
    SlotId,
    BranchId,
    JobRoleId,
    MembershipId,
    UserId,
    BookDate,
    Status,
    StartAt,
    EndAt,
    ClockedIn,
    ClockedOut,
    TotalBreakMinutes,
    Reminders,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum Locations {
    Table,
    Id,
}

#[derive(DeriveIden)]
enum JobRoles {
    Table,
    Id,
}

#[derive(DeriveIden)]
enum Memberships {
    Table,
    Id,
}

fn fk(
    from_table: impl IntoIden,
    from_col: impl IntoIden,
    to_table: impl IntoIden,
    to_col: impl IntoIden,
    on_delete: ForeignKeyAction,
) -> ForeignKeyCreateStatement {
    ForeignKey::create()
        .from(from_table, from_col)
        .to(to_table, to_col)
        .on_delete(on_delete)
        .to_owned()
}

async fn index(
    manager: &SchemaManager<'_>,
    name: &str,
    table: impl IntoIden,
    cols: Vec<DynIden>,
) -> Result<(), DbErr> {
    let mut stmt = Index::create();
    stmt.if_not_exists().name(name).table(table);
    for col in cols {
        stmt.col(col);
    }
    manager.create_index(stmt.clone()).await
}

/// The `shift_slots` table.
async fn shift_slots(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .create_table(
            Table::create()
                .table(ShiftSlots::Table)
                .if_not_exists()
                .col(
                    ColumnDef::new(ShiftSlots::Id)
                        .uuid()
                        .not_null()
                        .primary_key(),
                )
                .col(ColumnDef::new(ShiftSlots::CompanyId).uuid().not_null())
                .col(ColumnDef::new(ShiftSlots::BranchId).uuid().not_null())
                .col(ColumnDef::new(ShiftSlots::JobRoleId).uuid().not_null())
                .col(ColumnDef::new(ShiftSlots::StartTime).text().not_null())
                .col(ColumnDef::new(ShiftSlots::EndTime).text().not_null())
                .col(
                    ColumnDef::new(ShiftSlots::DayOfWeek)
                        .small_integer()
                        .not_null(),
                )
                .col(
                    ColumnDef::new(ShiftSlots::MaxStaffRequired)
                        .integer()
                        .not_null(),
                )
                .col(ColumnDef::new(ShiftSlots::TimeZone).text().not_null())
                .col(ColumnDef::new(ShiftSlots::Hours).double().not_null())
                .col(ColumnDef::new(ShiftSlots::ShiftName).text().not_null())
                .col(ColumnDef::new(ShiftSlots::ShiftColor).text().not_null())
                .col(ColumnDef::new(ShiftSlots::OpenShift).boolean().not_null())
                .col(ColumnDef::new(ShiftSlots::IsOncall).boolean().not_null())
                .col(ColumnDef::new(ShiftSlots::UnpaidBreak).integer().not_null())
                .col(
                    ColumnDef::new(ShiftSlots::Swappable)
                        .boolean()
                        .not_null()
                        .default(false),
                )
                .col(ColumnDef::new(ShiftSlots::WriteUp).text().null())
                .col(
                    ColumnDef::new(ShiftSlots::CreatedAt)
                        .timestamp_with_time_zone()
                        .not_null(),
                )
                .col(
                    ColumnDef::new(ShiftSlots::UpdatedAt)
                        .timestamp_with_time_zone()
                        .not_null(),
                )
                .foreign_key(&mut fk_company(ShiftSlots::Table, ShiftSlots::CompanyId))
                .foreign_key(&mut fk(
                    ShiftSlots::Table,
                    ShiftSlots::BranchId,
                    Locations::Table,
                    Locations::Id,
                    ForeignKeyAction::Cascade,
                ))
                .foreign_key(&mut fk(
                    ShiftSlots::Table,
                    ShiftSlots::JobRoleId,
                    JobRoles::Table,
                    JobRoles::Id,
                    ForeignKeyAction::Cascade,
                ))
                .to_owned(),
        )
        .await?;
    Ok(())
}

/// The index of `shift_slots`.
async fn shift_slot_index(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    index(
        manager,
        "ix_shift_slots_company",
        ShiftSlots::Table,
        vec![
            ShiftSlots::CompanyId.into_iden(),
            ShiftSlots::BranchId.into_iden(),
        ],
    )
    .await?;
    Ok(())
}

/// The `shifts` table.
async fn shifts(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .create_table(
            Table::create()
                .table(Shifts::Table)
                .if_not_exists()
                .col(ColumnDef::new(Shifts::Id).uuid().not_null().primary_key())
                .col(ColumnDef::new(Shifts::CompanyId).uuid().not_null())
                .col(ColumnDef::new(Shifts::SlotId).uuid().not_null())
                .col(ColumnDef::new(Shifts::BranchId).uuid().not_null())
                .col(ColumnDef::new(Shifts::JobRoleId).uuid().not_null())
                .col(ColumnDef::new(Shifts::MembershipId).uuid().null())
                .col(ColumnDef::new(Shifts::UserId).uuid().null())
                .col(ColumnDef::new(Shifts::BookDate).text().not_null())
                .col(ColumnDef::new(Shifts::Status).text().not_null())
                .col(
                    ColumnDef::new(Shifts::StartAt)
                        .timestamp_with_time_zone()
                        .not_null(),
                )
                .col(
                    ColumnDef::new(Shifts::EndAt)
                        .timestamp_with_time_zone()
                        .not_null(),
                )
                .col(
                    ColumnDef::new(Shifts::ClockedIn)
                        .timestamp_with_time_zone()
                        .null(),
                )
                .col(
                    ColumnDef::new(Shifts::ClockedOut)
                        .timestamp_with_time_zone()
                        .null(),
                )
                .col(
                    ColumnDef::new(Shifts::TotalBreakMinutes)
                        .integer()
                        .not_null()
                        .default(0),
                )
                .col(ColumnDef::new(Shifts::Reminders).text().null())
                .col(
                    ColumnDef::new(Shifts::CreatedAt)
                        .timestamp_with_time_zone()
                        .not_null(),
                )
                .col(
                    ColumnDef::new(Shifts::UpdatedAt)
                        .timestamp_with_time_zone()
                        .not_null(),
                )
                .foreign_key(&mut fk_company(Shifts::Table, Shifts::CompanyId))
                .foreign_key(&mut fk(
                    Shifts::Table,
                    Shifts::SlotId,
                    ShiftSlots::Table,
                    ShiftSlots::Id,
                    ForeignKeyAction::Cascade,
                ))
                .foreign_key(&mut fk(
                    Shifts::Table,
                    Shifts::MembershipId,
                    Memberships::Table,
                    Memberships::Id,
                    ForeignKeyAction::SetNull,
                ))
                .to_owned(),
        )
        .await?;
    Ok(())
}

/// The indexes of `shifts`.
async fn shift_indexes(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    // /schedules pages by (company, start, id).
    index(
        manager,
        "ix_shifts_company_start",
        Shifts::Table,
        vec![
            Shifts::CompanyId.into_iden(),
            Shifts::StartAt.into_iden(),
            Shifts::Id.into_iden(),
        ],
    )
    .await?;
    // Capacity checks count a slot's shifts on a date.
    index(
        manager,
        "ix_shifts_slot_date",
        Shifts::Table,
        vec![Shifts::SlotId.into_iden(), Shifts::BookDate.into_iden()],
    )
    .await?;
    // A member's shifts (workforce resource, on-duty state).
    index(
        manager,
        "ix_shifts_membership_start",
        Shifts::Table,
        vec![
            Shifts::MembershipId.into_iden(),
            Shifts::StartAt.into_iden(),
        ],
    )
    .await?;
    // /hours sums confirmed, clocked shifts by clock-in date.
    manager
        .get_connection()
        .execute_unprepared(
            "CREATE INDEX IF NOT EXISTS ix_shifts_hours ON shifts (company_id, clocked_in) \
                 WHERE status = 'confirmed' AND clocked_in IS NOT NULL AND clocked_out IS NOT NULL",
        )
        .await?;
    Ok(())
}

/// The `overtime_records` table and its index.
async fn overtime_records(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    ddl(
        manager,
        "CREATE TABLE IF NOT EXISTS overtime_records (
                    id {uuid} NOT NULL PRIMARY KEY,
                    company_id {uuid} NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
                    membership_id {uuid} NOT NULL REFERENCES memberships (id) ON DELETE CASCADE,
                    user_id {uuid} NOT NULL,
                    branch_id {uuid} NULL,
                    job_role_id {uuid} NULL,
                    worked_on text NOT NULL,
                    hours double precision NOT NULL,
                    approved_at {ts} NULL,
                    created_at {ts} NOT NULL
                )",
    )
    .await?;
    manager
            .get_connection()
            .execute_unprepared("CREATE INDEX IF NOT EXISTS ix_overtime_company_day ON overtime_records (company_id, worked_on)")
            .await?;
    Ok(())
}

/// The `unavailability` table and its index.
async fn unavailability(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    ddl(
        manager,
        "CREATE TABLE IF NOT EXISTS unavailability (
                    id {uuid} NOT NULL PRIMARY KEY,
                    company_id {uuid} NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
                    membership_id {uuid} NOT NULL REFERENCES memberships (id) ON DELETE CASCADE,
                    start_at {ts} NOT NULL,
                    end_at {ts} NOT NULL,
                    reason text NOT NULL,
                    created_at {ts} NOT NULL
                )",
    )
    .await?;
    manager
            .get_connection()
            .execute_unprepared("CREATE INDEX IF NOT EXISTS ix_unavailability_member ON unavailability (membership_id, start_at)")
            .await?;
    Ok(())
}

/// The `skill_sets` and `member_skills` tables.
async fn skills(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    ddl(
        manager,
        "CREATE TABLE IF NOT EXISTS skill_sets (
                    id {uuid} NOT NULL PRIMARY KEY,
                    company_id {uuid} NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
                    code text NOT NULL,
                    name text NOT NULL,
                    created_at {ts} NOT NULL
                )",
    )
    .await?;
    manager
        .get_connection()
        .execute_unprepared(
            "CREATE INDEX IF NOT EXISTS ix_skill_sets_company ON skill_sets (company_id)",
        )
        .await?;
    ddl(
        manager,
        "CREATE TABLE IF NOT EXISTS member_skills (
                    membership_id {uuid} NOT NULL REFERENCES memberships (id) ON DELETE CASCADE,
                    skill_set_id {uuid} NOT NULL REFERENCES skill_sets (id) ON DELETE CASCADE,
                    verified_at {ts} NULL,
                    created_at {ts} NOT NULL,
                    PRIMARY KEY (membership_id, skill_set_id)
                )",
    )
    .await?;
    Ok(())
}

/// The transactional outbox and its index.
async fn outbox(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    // Transactional outbox: rows commit with the change that caused them and are
    // delivered afterwards by a background sender.
    ddl(
        manager,
        "CREATE TABLE IF NOT EXISTS outbox (
                    id {uuid} NOT NULL PRIMARY KEY,
                    company_id {uuid} NULL,
                    kind text NOT NULL,
                    recipient text NOT NULL,
                    payload text NOT NULL,
                    attempts integer NOT NULL DEFAULT 0,
                    next_attempt_at {ts} NOT NULL,
                    sent_at {ts} NULL,
                    last_error text NULL,
                    created_at {ts} NOT NULL
                )",
    )
    .await?;
    manager
        .get_connection()
        .execute_unprepared(
            "CREATE INDEX IF NOT EXISTS ix_outbox_pending ON outbox (sent_at, next_attempt_at)",
        )
        .await?;
    Ok(())
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        shift_slots(manager).await?;
        shift_slot_index(manager).await?;
        shifts(manager).await?;
        shift_indexes(manager).await?;
        overtime_records(manager).await?;
        unavailability(manager).await?;
        skills(manager).await?;
        outbox(manager).await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            "outbox",
            "member_skills",
            "skill_sets",
            "unavailability",
            "overtime_records",
            "shifts",
            "shift_slots",
        ] {
            manager
                .get_connection()
                .execute_unprepared(&format!("DROP TABLE IF EXISTS {table}"))
                .await?;
        }
        Ok(())
    }
}
