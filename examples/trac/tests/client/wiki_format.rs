//! The Markdown → TracWiki converter checked by Trac's own renderer.

use trac_mcp::client::PutPageOptions;
use trac_mcp::wiki_format::{
    WikiFormat, detect_format, markdown_to_tracwiki, tracwiki_to_markdown,
};

use crate::common::{servers, unique};

const GUIDE: &str = "\
# Project Guide

Intro with *emphasis*, **strong**, ~~gone~~ and `inline code`.
See [the docs](https://example.org/docs) and [Other page](OtherPage.md).

## Lists

- first
- second
  - nested one
  - nested two
    1. deep
    2. deeper
- third

3. three
4. four

## Code

```python
print(\"hi\")
```

    indented block

## Table

| Name | Count | Note |
|:-----|------:|:----:|
| a    | 1     | x    |
| b    | 22    | y    |

> A quote
> over two lines

---

Last line  
after a hard break.
";

#[tokio::test]
async fn converted_markdown_renders_as_intended_in_trac() {
    let trac = servers().anon_client();
    assert_eq!(detect_format(GUIDE).format, WikiFormat::Markdown);
    let conversion = markdown_to_tracwiki(GUIDE);
    assert!(conversion.issues.is_empty(), "{:?}", conversion.issues);
    assert_eq!(
        detect_format(&conversion.text).format,
        WikiFormat::TracWiki,
        "{}",
        conversion.text
    );
    let html = trac.wiki_to_html(&conversion.text).await.unwrap();
    let expect = [
        ">Project Guide</h1>",
        ">Lists</h2>",
        "<em>emphasis</em>",
        "<strong>strong</strong>",
        "<del>gone</del>",
        "<code>inline code</code>",
        "href=\"https://example.org/docs\"",
        "the docs</a>",
        "/wiki/OtherPage\"",
        "<li>nested one",
        "<ol><li>deep",
        "<ol start=\"3\"><li>three",
        "print(\"hi\")",
        "indented block",
        "<th> Name </th>",
        "<td style=\"text-align: left\">a  </td>",
        "<td style=\"text-align: right\">  22</td>",
        "<td style=\"text-align: center\">  y  ",
        "<blockquote class=\"citation\">",
        "<hr />",
        "Last line<br />",
    ];
    let missing: Vec<&str> = expect
        .iter()
        .copied()
        .filter(|e| !html.contains(e))
        .collect();
    assert!(
        missing.is_empty(),
        "missing {missing:?} in\n{html}\nfrom\n{}",
        conversion.text
    );
    // nesting: the nested list sits inside the second item, the ordered one inside "nested two"
    let second = html.find("<li>second").unwrap();
    let nested = html.find("<ul><li>nested one").unwrap();
    let third = html.find("<li>third").unwrap();
    assert!(second < nested && nested < third, "{html}");
    assert!(
        !html.contains("system-message"),
        "Trac reported an error:\n{html}"
    );
}

#[tokio::test]
async fn text_that_looks_like_trac_markup_stays_literal() {
    let trac = servers().anon_client();
    let md = "Words: JavaScript, McDonald, #12, r42, [12], {1}, wiki:Foo, foo__bar__, x^2, a,,b, 2**3, \
              a // b, a ` b, {{{x}}}, ''q'', '''r''', a||b, [[BR]], C:\\\\\\\\d end";
    let conversion = markdown_to_tracwiki(md);
    let html = trac.wiki_to_html(&conversion.text).await.unwrap();
    for bad in [
        "<a ",
        "<em>",
        "<strong>",
        "underline",
        "<sup>",
        "<sub>",
        "<del>",
        "<br",
        "<table",
        "!",
    ] {
        assert!(
            !html.contains(bad),
            "{bad:?} in\n{html}\nfrom\n{}",
            conversion.text
        );
    }
    for word in [
        "JavaScript",
        "McDonald",
        "#12",
        "r42",
        "[12]",
        "{1}",
        "wiki:Foo",
        "foo__bar__",
        "x^2",
        "a,,b",
        "2**3",
        "a // b",
    ] {
        assert!(html.contains(word), "{word:?} missing in\n{html}");
    }
    for code in ["<code>`</code>", "<code>{{{</code>x<code>}}}</code>"] {
        assert!(html.contains(code), "{code:?} missing in\n{html}");
    }
    assert!(
        html.contains("&#39;&#39;q&#39;&#39;") || html.contains("''q''"),
        "{html}"
    );
}

#[tokio::test]
async fn push_and_pull_round_trip_through_a_page() {
    let trac = servers().anon_client();
    let page = unique("Converted");
    let pushed = markdown_to_tracwiki(GUIDE).text;
    trac.put_wiki_page(&page, &pushed, &PutPageOptions::default())
        .await
        .unwrap();
    let stored = trac
        .get_wiki_page(&page, None)
        .await
        .unwrap()
        .replace("\r\n", "\n");
    assert_eq!(stored.trim_end(), pushed.trim_end());

    let pulled = tracwiki_to_markdown(&stored);
    assert_eq!(
        detect_format(&pulled.text).format,
        WikiFormat::Markdown,
        "{}",
        pulled.text
    );
    // converting the pulled Markdown again gives the same TracWiki
    let again = markdown_to_tracwiki(&pulled.text);
    if again.text != pushed {
        let diff: Vec<String> = again
            .text
            .lines()
            .zip(pushed.lines())
            .filter(|(a, b)| a != b)
            .map(|(a, b)| format!("{a:?} != {b:?}"))
            .collect();
        panic!(
            "round trip differs: {diff:#?}\npulled Markdown:\n{}",
            pulled.text
        );
    }
    assert!(pulled.issues.is_empty(), "{:?}", pulled.issues);
    trac.delete_wiki_page(&page, None).await.unwrap();
}
