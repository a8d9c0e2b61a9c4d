//! Everything wfs runs in the background, in the one call a host spawns
//! (`Wfs::run_background`): webhook delivery and the mail outbox (through the host's
//! mailer) run until the host's shutdown future resolves, and then the call returns.

use crate::receiver::Receiver;
use crate::webhook_delivery::{Db, company, create_role, endpoint, staff_member};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wfs_core::service::locations::NewLocation;
use wfs_core::service::outbox::{Email, MailFuture, Mailer};
use wfs_core::{Ref, WebhookSettings};

/// A host's mailer that keeps what it is handed.
#[derive(Debug, Default)]
struct Outbox(Mutex<Vec<Email>>);

impl Mailer for Outbox {
    fn send<'a>(&'a self, email: &'a Email) -> MailFuture<'a> {
        self.0.lock().unwrap().push(email.clone());
        Box::pin(std::future::ready(Ok(())))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_background_delivers_webhooks_and_mail_until_the_shutdown_then_returns() {
    // Arrange: a loopback receiver (allowed through the settings' setter), the host's
    // mailer, and the background work running on its own task.
    let db = Db::fresh().await;
    let mail = Arc::new(Outbox::default());
    let wfs = db
        .facade(WebhookSettings::default().allow_private_targets(true))
        .await
        .with_mailer(mail.clone());
    let acme = company(&wfs, "Acme").await;
    let receiver = Receiver::ok().await;
    endpoint(&wfs, acme, &receiver.url, &["job_role.created"]).await;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let background = tokio::spawn({
        let wfs = wfs.clone();
        async move {
            wfs.run_background(async move {
                let _ = stopped.await;
            })
            .await
        }
    });

    // Act: a change with an event, and a new member with a welcome email.
    let nurse = create_role(&wfs, acme, "Nurse").await;
    let tx = wfs.begin().await.unwrap();
    let clinic = wfs
        .create_location(
            &tx,
            acme,
            NewLocation {
                name: "North Clinic".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let mut member = staff_member("Grace", "Hopper", "bg", "+1 415 555 0100");
    member.assigned_branch_id = Ref::Id(clinic.id);
    member.job_role_id = nurse.into();
    let report = wfs
        .bulk_create_staff(&tx, acme, vec![Ok(member)])
        .await
        .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(report.created.len(), 1, "{:?}", report.errors);

    // Assert: the webhook arrived and the email reached the host's mailer.
    let delivered = receiver.wait_for(1).await;
    assert_eq!(delivered[0].json()["type"], "job_role.created");
    let started = Instant::now();
    while mail.0.lock().unwrap().is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "the welcome email never reached the mailer"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(mail.0.lock().unwrap()[0].to, "grace.hopper@private-bg.test");

    // And the call returns once the shutdown resolves.
    stop.send(()).unwrap();
    let ended = tokio::time::timeout(Duration::from_secs(15), background)
        .await
        .expect("run_background returns after the shutdown")
        .unwrap();
    assert!(ended.is_ok(), "{ended:?}");
}
