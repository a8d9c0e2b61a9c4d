//! `wfs-server demo`: a realistic company so that every read route shows real values.
//!
//! Everything is created through the `wfs-core` operations, in one transaction: a
//! failed run leaves nothing behind, and a database that already holds the demo
//! (its admin exists) gets nothing new.

use chrono::{Datelike, Duration, NaiveDate};
use wfs_core::WriteTx;
use wfs_core::domain::scope::Scope;
use wfs_core::domain::shift::Capacity;
use wfs_core::domain::time::{self, HhMm};
use wfs_core::persistence::entity::{membership, user};
use wfs_core::sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
use wfs_core::service::accounts::NewCompanyAdmin;
use wfs_core::service::api_keys::NewApiKey;
use wfs_core::service::job_roles::NewJobRole;
use wfs_core::service::locations::NewLocation;
use wfs_core::service::shifts::{Assignee, Booking, NewShiftSlot};
use wfs_core::service::staff::NewStaffMember;
use wfs_core::service::staff::StaffMember;
use wfs_core::{
    AdminPrincipal, CompanyId, JobRoleId, LocationId, MembershipId, SkillSetId, SlotId, UserId, Wfs,
};

/// The demo admin's sign-in.
pub const ADMIN_EMAIL: &str = "admin@harborview.example";
/// The demo admin's password.
pub const ADMIN_PASSWORD: &str = "harborview-demo";
const ZONE: &str = "America/New_York";

/// What a demo run did.
#[derive(Debug)]
pub enum Outcome {
    /// The demo was created now; the key is shown this once.
    Created {
        /// The company.
        company_id: CompanyId,
        /// API key client id.
        client_id: String,
        /// API key secret.
        client_secret: String,
    },
    /// The database already held the demo; nothing was added.
    AlreadyPresent {
        /// The demo company (`None` if its admin has lost every membership).
        company_id: Option<CompanyId>,
    },
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A small deterministic generator, so every demo database looks the same.
struct Dice(u64);

impl Dice {
    fn roll(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

const FIRST: [&str; 12] = [
    "Ava", "Liam", "Maya", "Noah", "Zoe", "Omar", "Iris", "Ravi", "Lena", "Theo", "Nia", "Hugo",
];
const LAST: [&str; 6] = [
    "Okafor",
    "Lindqvist",
    "Moreau",
    "Tanaka",
    "Alvarez",
    "Kowalski",
];

/// Fills the database with the demo company unless it is already there.
pub async fn seed(wfs: &Wfs) -> Result<Outcome, BoxError> {
    if let Some(present) = already_present(wfs).await? {
        return Ok(present);
    }
    let tx = wfs.begin().await?;
    let conn = &tx;
    let created = wfs
        .create_company_with_admin(
            conn,
            NewCompanyAdmin {
                company_name: "Harborview Health".into(),
                email: ADMIN_EMAIL.into(),
                password: ADMIN_PASSWORD.into(),
                first_name: "Dana".into(),
                last_name: "Whitfield".into(),
            },
        )
        .await?;
    let demo = Demo {
        wfs,
        conn,
        company: created.company_id,
    };
    let org = Organisation {
        locations: demo.create_locations().await?,
        roles: demo.create_job_roles().await?,
        skills: demo.create_skill_sets().await?,
    };
    let staff = demo.hire_staff(&org).await?;
    let today = wfs.now().date_naive();
    let first_day = today - Duration::days(14);
    let slots = demo.create_weekly_slots(&org, first_day).await?;
    demo.book_a_month(&org, &staff, &slots, first_day).await?;
    demo.add_staff_records(&org, &staff, today).await?;
    let (client_id, client_secret) = demo.create_api_key(created.user_id).await?;
    tx.commit().await?;
    Ok(Outcome::Created {
        company_id: created.company_id,
        client_id,
        client_secret,
    })
}

/// The demo's outcome when its admin already exists: nothing is added.
async fn already_present(wfs: &Wfs) -> Result<Option<Outcome>, BoxError> {
    let present = user::Entity::find()
        .filter(user::Column::Email.eq(ADMIN_EMAIL))
        .one(wfs.store().conn())
        .await?;
    let Some(admin) = present else {
        return Ok(None);
    };
    let company_id = membership::Entity::find()
        .filter(membership::Column::UserId.eq(admin.id))
        .order_by_asc(membership::Column::CreatedAt)
        .one(wfs.store().conn())
        .await?
        .map(|m| CompanyId::from(m.company_id));
    Ok(Some(Outcome::AlreadyPresent { company_id }))
}

/// The demo company being written, in the seed's one transaction.
struct Demo<'a> {
    wfs: &'a Wfs,
    conn: &'a WriteTx,
    company: CompanyId,
}

/// What the staff, slots and bookings are spread over.
struct Organisation {
    locations: Vec<LocationId>,
    roles: Vec<JobRoleId>,
    skills: Vec<SkillSetId>,
}

/// A weekly slot: its id, the indexes of its location and role, its day of week.
type WeeklySlot = (SlotId, usize, usize, u8);

impl Demo<'_> {
    /// Three locations around Boston.
    async fn create_locations(&self) -> Result<Vec<LocationId>, BoxError> {
        let mut locations = Vec::new();
        for (name, city, lat, lon) in [
            ("Harborview Hospital", "Boston", 42.3601, -71.0589),
            ("Northside Clinic", "Cambridge", 42.3736, -71.1097),
            ("Eastgate Care Home", "Quincy", 42.2529, -71.0023),
        ] {
            let location = NewLocation {
                name: name.into(),
                address: Some("Address kept private".into()),
                country_id: Some("US".into()),
                state_id: Some("MA".into()),
                city_id: Some(city.into()),
                zip_code: Some("02100".into()),
                latitude: Some(lat),
                longitude: Some(lon),
                location_detection_enabled: Some(true),
                ..Default::default()
            };
            locations.push(
                self.wfs
                    .create_location(self.conn, self.company, location)
                    .await?
                    .id,
            );
        }
        Ok(locations)
    }

    /// Six job roles, from nurses to porters.
    async fn create_job_roles(&self) -> Result<Vec<JobRoleId>, BoxError> {
        let mut roles = Vec::new();
        for (title, symbol, hours, color) in [
            ("Registered Nurse", "RN", 36.0, "#2E86DE"),
            ("Nursing Assistant", "NA", 38.0, "#10AC84"),
            ("Physician", "MD", 40.0, "#8E44AD"),
            ("Pharmacist", "PH", 40.0, "#E67E22"),
            ("Receptionist", "RC", 30.0, "#F1C40F"),
            ("Porter", "PO", 37.5, "#7F8C8D"),
        ] {
            let role = NewJobRole {
                title: title.into(),
                weekly_hours: Some(hours),
                symbol: Some(symbol.into()),
                hexcode: Some(color.into()),
                daily_required: Some(2),
                ..Default::default()
            };
            roles.push(
                self.wfs
                    .create_job_role(self.conn, self.company, role)
                    .await?
                    .id,
            );
        }
        Ok(roles)
    }

    /// Five skill sets.
    async fn create_skill_sets(&self) -> Result<Vec<SkillSetId>, BoxError> {
        let mut skills = Vec::new();
        for (code, name) in [
            ("BLS", "Basic Life Support"),
            ("ACLS", "Advanced Cardiac Life Support"),
            ("PALS", "Pediatric Advanced Life Support"),
            ("IVT", "IV Therapy"),
            ("MH", "Manual Handling"),
        ] {
            skills.push(
                self.wfs
                    .create_skill_set(self.conn, self.company, code, name)
                    .await?,
            );
        }
        Ok(skills)
    }

    /// 72 staff members, each with a skill.
    async fn hire_staff(&self, org: &Organisation) -> Result<Vec<StaffMember>, BoxError> {
        let Organisation {
            locations,
            roles,
            skills,
        } = org;
        // 72 staff: every location has every role, nurses and assistants most.
        let mut items = Vec::new();
        let mut n = 0;
        for (l, location) in locations.iter().enumerate() {
            for (r, role) in roles.iter().enumerate() {
                let count = match r {
                    0 | 1 => 7,
                    _ => 2,
                };
                for _ in 0..count {
                    let first = FIRST[n % FIRST.len()];
                    let last = LAST[(n / FIRST.len()) % LAST.len()];
                    items.push(Ok(NewStaffMember {
                        first_name: first.into(),
                        last_name: last.into(),
                        user_name: format!("{}.{}.{n}", first.to_lowercase(), last.to_lowercase()),
                        email: format!(
                            "{}.{}.{n}@harborview.example",
                            first.to_lowercase(),
                            last.to_lowercase()
                        ),
                        phone: format!("+1617555{n:04}"),
                        gender: if n % 2 == 0 { "female" } else { "male" }.into(),
                        country_id: "US".into(),
                        assigned_branch_id: (*location).into(),
                        job_role_id: (*role).into(),
                        privilege: if n % 24 == 0 && l == 0 { 2 } else { 3 },
                        skill_set_ids: vec![skills[n % skills.len()].into()],
                    }));
                    n += 1;
                }
            }
        }
        let report = self
            .wfs
            .bulk_create_staff(self.conn, self.company, items)
            .await?;
        if !report.errors.is_empty() {
            return Err(format!("demo staff rejected: {:?}", report.errors[0].reason).into());
        }
        Ok(report.created)
    }

    /// The slots of one week, repeated every week.
    async fn create_weekly_slots(
        &self,
        org: &Organisation,
        first_day: NaiveDate,
    ) -> Result<Vec<WeeklySlot>, BoxError> {
        let Organisation {
            locations, roles, ..
        } = org;
        // Weekly slots: nurses and assistants around the clock, the others on weekdays.
        let mut slots = Vec::new();
        for (l, location) in locations.iter().enumerate() {
            for (r, role) in roles.iter().enumerate() {
                let (days, shifts): (Vec<u8>, &[(&str, &str, &str)]) = if r < 2 {
                    (
                        (0..7).collect(),
                        &[
                            ("Day", "07:00", "15:00"),
                            ("Evening", "15:00", "23:00"),
                            ("Night", "23:00", "07:00"),
                        ],
                    )
                } else {
                    ((1..6).collect(), &[("Day", "08:00", "16:30")])
                };
                for day in days {
                    for (name, start, end) in shifts {
                        let book_date = first_day
                            + Duration::days(i64::from(
                                (7 + i64::from(day)
                                    - i64::from(first_day.weekday().num_days_from_sunday()))
                                .rem_euclid(7) as u8,
                            ));
                        let input = NewShiftSlot {
                            branch_id: (*location).into(),
                            job_role_id: (*role).into(),
                            start_time: HhMm::parse("startTime", start)?,
                            end_time: HhMm::parse("endTime", end)?,
                            book_date,
                            day_of_week: time::parse_day_of_week("dayOfWeek", i64::from(day))?,
                            max_staff_required: Capacity::new("maxStaffRequired", 3)?,
                            time_zone: time::parse_zone("timeZone", ZONE)?,
                            shift_name: (*name).into(),
                            shift_color: "#2E86DE".into(),
                            open_shift: false,
                            is_oncall: *name == "Night",
                            unpaid_break: 30,
                            hours: None,
                            write_up: None,
                        };
                        let (slot, _) = self
                            .wfs
                            .create_shift_slot(self.conn, self.company, input)
                            .await?;
                        slots.push((slot.id, l, r, day));
                    }
                }
            }
        }
        Ok(slots)
    }

    /// Bookings from `first_day` for four weeks; the past ones worked.
    async fn book_a_month(
        &self,
        org: &Organisation,
        staff: &[StaffMember],
        slots: &[WeeklySlot],
        first_day: NaiveDate,
    ) -> Result<(), BoxError> {
        let Organisation {
            locations, roles, ..
        } = org;
        // A month of bookings: two weeks back, two weeks ahead.
        let mut dice = Dice(0x9E37_79B9_7F4A_7C15);
        for offset in 0..28 {
            let date: NaiveDate = first_day + Duration::days(offset);
            let weekday = date.weekday().num_days_from_sunday() as u8;
            for (slot, l, r, _) in slots.iter().filter(|(_, _, _, d)| *d == weekday) {
                let pool: Vec<_> = staff
                    .iter()
                    .filter(|m| {
                        m.branch_id == Some(locations[*l]) && m.job_role_id == Some(roles[*r])
                    })
                    .collect();
                let pick = pool[dice.roll(pool.len() as u64) as usize];
                let booking = Booking {
                    slot_id: (*slot).into(),
                    date,
                    assignees: vec![Assignee {
                        user_id: pick.user_id.into(),
                    }],
                    reminders: vec![60],
                };
                let booked = self
                    .wfs
                    .book_shift(self.conn, self.company, booking)
                    .await?;
                // Past shifts were worked: clock times a few minutes off schedule.
                for shift in booked.shifts.iter().filter(|s| s.end < self.wfs.now()) {
                    let id = shift.id;
                    let early = Duration::minutes(dice.roll(15) as i64 - 5);
                    let late = Duration::minutes(dice.roll(40) as i64 - 10);
                    self.wfs
                        .clock_in(self.conn, self.company, id, shift.start + early)
                        .await?;
                    self.wfs
                        .record_break(self.conn, self.company, id, 30)
                        .await?;
                    self.wfs
                        .clock_out(self.conn, self.company, id, shift.end + late)
                        .await?;
                }
            }
        }
        Ok(())
    }

    /// Overtime, unavailability and qualifications of some of the staff.
    async fn add_staff_records(
        &self,
        org: &Organisation,
        staff: &[StaffMember],
        today: NaiveDate,
    ) -> Result<(), BoxError> {
        let skills = &org.skills;
        // Approved overtime this week, unavailability ahead, verified qualifications.
        let monday = today - Duration::days(i64::from(today.weekday().num_days_from_monday()));
        for (i, member) in staff.iter().enumerate() {
            let id: MembershipId = member.membership_id;
            if i % 9 == 0 {
                self.wfs
                    .approve_overtime(self.conn, self.company, id, monday, 1.5 + (i % 3) as f64)
                    .await?;
            }
            if i % 11 == 3 {
                let start = (today + Duration::days(3 + (i % 5) as i64))
                    .and_hms_opt(0, 0, 0)
                    .unwrap_or_default()
                    .and_utc();
                self.wfs
                    .add_unavailability(
                        self.conn,
                        self.company,
                        id,
                        start,
                        start + Duration::days(2),
                        "annual leave",
                    )
                    .await?;
            }
            if i % 2 == 0 {
                self.wfs
                    .add_qualification(self.conn, self.company, id, skills[i % skills.len()])
                    .await?;
            }
        }
        Ok(())
    }

    /// The demo's API key, with every scope: its client id and secret.
    async fn create_api_key(&self, admin: UserId) -> Result<(String, String), BoxError> {
        let admin = AdminPrincipal {
            user_id: admin,
            company_id: self.company,
        };
        let key = self
            .wfs
            .create_api_key(
                self.conn,
                admin,
                NewApiKey {
                    name: "Demo key (all scopes)".into(),
                    scopes: Some(Scope::ALL.iter().map(|s| s.as_str().to_owned()).collect()),
                    ..Default::default()
                },
            )
            .await?;
        Ok((key.client_id.clone(), key.secret().to_owned()))
    }
}
