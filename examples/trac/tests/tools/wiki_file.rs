//! wiki_file_push, wiki_file_pull, wiki_file_detect_format with real files.

use std::path::PathBuf;

use mcp_toolbelt::ErrorKind;
use serde_json::json;

use crate::Tools;
use crate::common::unique;

/// A fresh scratch directory for one test.
fn scratch() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(unique("wiki-files-"));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const MARKDOWN: &str = "# Release notes\n\nThe *new* build:\n\n- faster start\n- fixes `--quiet`\n\n| Option | Effect |\n|---|---|\n| -v | verbose |\n\n<div>raw html</div>\n";

#[tokio::test]
async fn push_converts_markdown_and_pull_round_trips() {
    let tools = Tools::anon().await;
    let dir = scratch();
    let page = unique("Notes/Release");
    let source = dir.join("notes.md");
    std::fs::write(&source, MARKDOWN).unwrap();

    let pushed = tools
        .ok(
            "wiki_file_push",
            json!({"path": source, "page": page, "comment": "from file"}),
        )
        .await;
    assert_eq!(pushed["path"], source.display().to_string());
    assert_eq!(
        (pushed["created"].as_bool(), pushed["version"].as_i64()),
        (Some(true), Some(1))
    );
    assert_eq!(
        (
            pushed["source_format"].as_str(),
            pushed["converted"].as_bool()
        ),
        (Some("markdown"), Some(true))
    );
    let issues = pushed["conversion_issues"].as_array().unwrap();
    assert!(
        issues.iter().any(|i| i["construct"] == "html"),
        "the raw HTML is reported: {pushed}"
    );

    // in Trac: TracWiki markup
    let stored = tools.ok("wiki_get", json!({"name": page})).await;
    let text = stored["text"].as_str().unwrap();
    assert!(text.starts_with("= Release notes ="), "{text}");
    assert!(text.contains(" * faster start"), "{text}");
    assert!(text.contains("''new''"), "{text}");
    assert!(text.contains("||"), "the table is a Trac table: {text}");
    assert_eq!(stored["comment"], "from file");

    // pull as TracWiki: the stored text byte for byte
    let raw = dir.join("notes.wiki");
    let pulled = tools
        .ok("wiki_file_pull", json!({"page": page, "path": raw}))
        .await;
    assert_eq!(
        (pulled["format"].as_str(), pulled["version"].as_i64()),
        (Some("tracwiki"), Some(1))
    );
    assert_eq!(std::fs::read_to_string(&raw).unwrap(), text);
    assert_eq!(pulled["bytes"], text.len());

    // pull as Markdown (by extension), push it back: Trac's text does not change
    let md = dir.join("back.md");
    let pulled = tools
        .ok("wiki_file_pull", json!({"page": page, "path": md}))
        .await;
    assert_eq!(pulled["format"], "markdown");
    let back = std::fs::read_to_string(&md).unwrap();
    assert!(back.starts_with("# Release notes"), "{back}");
    let again = tools
        .ok("wiki_file_push", json!({"path": md, "page": page}))
        .await;
    assert_eq!(
        (again["changed"].as_bool(), again["version"].as_i64()),
        (Some(false), Some(1)),
        "{again}"
    );

    // an edited file makes a new version
    std::fs::write(&md, back.replace("faster start", "much faster start")).unwrap();
    let edited = tools
        .ok("wiki_file_push", json!({"path": md, "page": page}))
        .await;
    assert_eq!(
        (
            edited["changed"].as_bool(),
            edited["created"].as_bool(),
            edited["version"].as_i64()
        ),
        (Some(true), Some(false), Some(2))
    );
    let now = tools.ok("wiki_get", json!({"name": page})).await;
    assert!(
        now["text"]
            .as_str()
            .unwrap()
            .contains(" * much faster start")
    );
    // an older version on request
    let first = dir.join("first.wiki");
    let pulled = tools
        .ok(
            "wiki_file_pull",
            json!({"page": page, "path": first, "page_version": 1}),
        )
        .await;
    assert_eq!(pulled["version"], 1);
    assert_eq!(std::fs::read_to_string(&first).unwrap(), text);
}

#[tokio::test]
async fn pull_never_overwrites_unless_asked() {
    let tools = Tools::anon().await;
    let dir = scratch();
    let page = unique("Pulled");
    tools
        .ok(
            "wiki_create",
            json!({"name": page, "content": "= Pulled =\n"}),
        )
        .await;
    let target = dir.join("existing.txt");
    std::fs::write(&target, "keep me").unwrap();
    let refused = tools
        .fail("wiki_file_pull", json!({"page": page, "path": target}))
        .await;
    assert_eq!(refused.kind, ErrorKind::Conflict);
    assert!(refused.action().contains("overwrite"), "{}", refused.text);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
    tools
        .ok(
            "wiki_file_pull",
            json!({"page": page, "path": target, "overwrite": true}),
        )
        .await;
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "= Pulled =\n");
    let nowhere = tools
        .fail(
            "wiki_file_pull",
            json!({"page": page, "path": dir.join("no/such/dir.txt")}),
        )
        .await;
    assert_eq!(nowhere.kind, ErrorKind::NotFound);
    let missing_page = tools
        .fail(
            "wiki_file_pull",
            json!({"page": unique("NoSuchPage"), "path": dir.join("x.txt")}),
        )
        .await;
    assert_eq!(missing_page.kind, ErrorKind::NotFound);
    assert!(!dir.join("x.txt").exists());
}

#[tokio::test]
async fn detect_format_reads_local_files() {
    let tools = Tools::anon().await;
    let dir = scratch();
    let md = dir.join("a.txt");
    std::fs::write(&md, MARKDOWN).unwrap();
    let trac = dir.join("b.txt");
    std::fs::write(
        &trac,
        "= Title =\n\n'''bold''' and [wiki:WikiStart start]\n{{{\ncode\n}}}\n",
    )
    .unwrap();
    let plain = dir.join("c.txt");
    std::fs::write(&plain, "just words\n").unwrap();
    for (path, format) in [(&md, "markdown"), (&trac, "tracwiki"), (&plain, "plain")] {
        let found = tools
            .ok("wiki_file_detect_format", json!({"path": path}))
            .await;
        assert_eq!(found["format"], format, "{found}");
        assert_eq!(found["path"], path.display().to_string());
    }
    let evidence = tools
        .ok("wiki_file_detect_format", json!({"path": md}))
        .await;
    assert!(!evidence["evidence"].as_array().unwrap().is_empty());
    let missing = tools
        .fail(
            "wiki_file_detect_format",
            json!({"path": dir.join("none.md")}),
        )
        .await;
    assert_eq!(missing.kind, ErrorKind::NotFound);
    let binary = dir.join("bin.dat");
    std::fs::write(&binary, [0x66, 0x6f, 0xff, 0xfe]).unwrap();
    let refused = tools
        .fail(
            "wiki_file_push",
            json!({"path": binary, "page": unique("Bin")}),
        )
        .await;
    assert_eq!(refused.kind, ErrorKind::Validation);
    assert!(refused.text.contains("UTF-8"), "{}", refused.text);
    let directory = tools
        .fail("wiki_file_detect_format", json!({"path": dir}))
        .await;
    assert_eq!(directory.kind, ErrorKind::Validation);
}
