use chrono::{TimeZone, Utc};
use trac_mcp::client::{ErrorKind, MilestoneChanges, TracError};

use crate::common::{servers, unique};

#[tokio::test]
async fn milestone_lifecycle() {
    let trac = servers().anon_client();
    let name = unique("ms-");
    let due = Utc.with_ymd_and_hms(2030, 1, 2, 3, 4, 5).unwrap();
    let create = MilestoneChanges {
        description: Some("first".into()),
        due: Some(Some(due)),
        ..Default::default()
    };
    trac.create_milestone(&name, &create).await.unwrap();
    let m = trac.get_milestone(&name).await.unwrap();
    assert_eq!(
        (m.name.as_str(), m.description.as_str(), m.due, m.completed),
        (name.as_str(), "first", Some(due), None)
    );
    assert!(trac.list_milestones().await.unwrap().contains(&name));

    let err = trac
        .create_milestone(&name, &MilestoneChanges::default())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AlreadyExists, "{err}");

    let done = Utc.with_ymd_and_hms(2029, 12, 31, 23, 0, 0).unwrap();
    let update = MilestoneChanges {
        description: Some("second".into()),
        completed: Some(Some(done)),
        due: Some(None),
        ..Default::default()
    };
    trac.update_milestone(&name, &update).await.unwrap();
    let m = trac.get_milestone(&name).await.unwrap();
    assert_eq!(
        (m.description.as_str(), m.due, m.completed),
        ("second", None, Some(done))
    );

    let renamed = format!("{name}-renamed");
    let rename = MilestoneChanges {
        name: Some(renamed.clone()),
        ..Default::default()
    };
    trac.update_milestone(&name, &rename).await.unwrap();
    assert_eq!(
        trac.get_milestone(&name).await.unwrap_err().kind(),
        ErrorKind::NotFound
    );
    assert_eq!(
        trac.get_milestone(&renamed).await.unwrap().description,
        "second"
    );

    let batch = trac
        .get_milestones(&[renamed.clone(), "milestone1".into(), name.clone()])
        .await
        .unwrap();
    assert_eq!(batch[0].as_ref().unwrap().name, renamed);
    assert_eq!(batch[1].as_ref().unwrap().name, "milestone1");
    assert_eq!(batch[2].as_ref().unwrap_err().kind(), ErrorKind::NotFound);

    trac.delete_milestone(&renamed).await.unwrap();
    let err = trac.get_milestone(&renamed).await.unwrap_err();
    assert_eq!(
        (err.kind(), err.fault_code()),
        (ErrorKind::NotFound, Some(404))
    );
    assert_eq!(
        trac.delete_milestone(&renamed).await.unwrap_err().kind(),
        ErrorKind::NotFound
    );
    assert!(!trac.list_milestones().await.unwrap().contains(&renamed));
}

#[tokio::test]
async fn milestone_argument_checks() {
    let trac = servers().anon_client();
    let err = trac
        .update_milestone("milestone1", &MilestoneChanges::default())
        .await
        .unwrap_err();
    assert!(
        matches!(err, TracError::InvalidArgument(ref m) if m.contains("nothing to change")),
        "{err:?}"
    );
    let err = trac.get_milestone("").await.unwrap_err();
    assert!(matches!(err, TracError::InvalidArgument(_)), "{err:?}");
    let missing = trac
        .update_milestone(
            "no-such-milestone",
            &MilestoneChanges {
                description: Some("x".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::NotFound);
}
