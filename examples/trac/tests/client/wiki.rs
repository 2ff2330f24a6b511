use chrono::{Duration, Utc};
use trac_mcp::client::{ErrorKind, PutPageOptions, TracError};

use crate::common::{servers, unique};

fn nl(s: &str) -> String {
    s.replace("\r\n", "\n")
}

#[tokio::test]
async fn page_lifecycle_versions_info_recent_search_delete() {
    let trac = servers().anon_client();
    let name = unique("RpcPage");
    let token = unique("needle");
    let before = Utc::now() - Duration::hours(1);
    assert_eq!(trac.get_wiki_page_info(&name, None).await.unwrap(), None);

    let v1 = format!("= Title =\nfirst version ü {token}\n");
    let v2 = format!("= Title =\nsecond version {token}\n");
    trac.put_wiki_page(&name, &v1, &PutPageOptions::default())
        .await
        .unwrap();
    let opts = PutPageOptions {
        comment: Some("second".into()),
        author: None,
    };
    trac.put_wiki_page(&name, &v2, &opts).await.unwrap();

    assert_eq!(nl(&trac.get_wiki_page(&name, None).await.unwrap()), v2);
    assert_eq!(nl(&trac.get_wiki_page(&name, Some(1)).await.unwrap()), v1);
    let info = trac
        .get_wiki_page_info(&name, None)
        .await
        .unwrap()
        .expect("page exists");
    assert_eq!(
        (info.name.as_str(), info.version, info.comment.as_str()),
        (name.as_str(), 2, "second")
    );
    assert_eq!(info.author, "anonymous");
    let info1 = trac
        .get_wiki_page_info(&name, Some(1))
        .await
        .unwrap()
        .unwrap();
    assert_eq!((info1.version, info1.comment.as_str()), (1, ""));
    assert!(info1.last_modified <= info.last_modified);
    assert_eq!(trac.get_wiki_page_info(&name, Some(7)).await.unwrap(), None);

    let recent = trac.wiki_recent_changes(before).await.unwrap();
    assert!(
        recent.iter().any(|p| p.name == name && p.version == 2),
        "{recent:?}"
    );
    assert!(trac.list_wiki_pages().await.unwrap().contains(&name));

    let hits = trac.search(&token, &["wiki"]).await.unwrap();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].wiki_page(), Some(name.as_str()));
    assert!(hits[0].excerpt.contains(&token));
    let filters = trac.search_filters().await.unwrap();
    assert!(filters.iter().any(|f| f.name == "wiki") && filters.iter().any(|f| f.name == "ticket"));

    // saving identical text is refused by Trac
    let err = trac.put_wiki_page(&name, &v2, &opts).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert_eq!(err.trac_message(), "Page not modified");

    assert!(trac.delete_wiki_page(&name, None).await.unwrap());
    let err = trac.get_wiki_page(&name, None).await.unwrap_err();
    assert_eq!(
        (err.kind(), err.fault_code()),
        (ErrorKind::NotFound, Some(404))
    );
    assert_eq!(trac.get_wiki_page_info(&name, None).await.unwrap(), None);
    assert!(!trac.delete_wiki_page(&name, None).await.unwrap());
    assert!(trac.search(&token, &["wiki"]).await.unwrap().is_empty());
}

#[tokio::test]
async fn delete_one_version() {
    let trac = servers().anon_client();
    let name = unique("Versioned");
    for text in ["one", "two"] {
        trac.put_wiki_page(&name, text, &PutPageOptions::default())
            .await
            .unwrap();
    }
    assert!(trac.delete_wiki_page(&name, Some(2)).await.unwrap());
    assert_eq!(trac.get_wiki_page(&name, None).await.unwrap(), "one");
    assert_eq!(
        trac.get_wiki_page_info(&name, None)
            .await
            .unwrap()
            .unwrap()
            .version,
        1
    );
}

#[tokio::test]
async fn empty_names_and_queries_are_rejected_locally() {
    let trac = servers().anon_client();
    for err in [
        trac.get_wiki_page("", None).await.unwrap_err(),
        trac.put_wiki_page(" Page", "x", &PutPageOptions::default())
            .await
            .unwrap_err(),
        trac.search("  ", &[]).await.unwrap_err(),
    ] {
        assert!(matches!(err, TracError::InvalidArgument(_)), "{err:?}");
    }
}
