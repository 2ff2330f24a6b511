//! `wiki.*` and `search.*`.

use chrono::{DateTime, Utc};

use super::value::{as_bool, as_string, datetime_value};
use super::{
    PutPageOptions, RpcCall, SearchFilter, SearchResult, TracClient, TracError, Value,
    WikiPageInfo, check_name, decode_list,
};

impl TracClient {
    /// `wiki.getPage` / `wiki.getPageVersion`: the page text (latest or the
    /// given version); fault 404 if missing.
    pub async fn get_wiki_page(
        &self,
        name: &str,
        version: Option<i32>,
    ) -> Result<String, TracError> {
        check_name("wiki page", name)?;
        let (method, params) =
            page_and_version("wiki.getPage", "wiki.getPageVersion", name, version);
        self.call_as(method, params, |v| as_string(v, "wiki page text"))
            .await
    }

    /// `wiki.getPageInfo` / `wiki.getPageInfoVersion`. `Ok(None)` if the page
    /// (version) does not exist: Trac answers that with no info, not a fault.
    pub async fn get_wiki_page_info(
        &self,
        name: &str,
        version: Option<i32>,
    ) -> Result<Option<WikiPageInfo>, TracError> {
        check_name("wiki page", name)?;
        let (method, params) =
            page_and_version("wiki.getPageInfo", "wiki.getPageInfoVersion", name, version);
        self.call_as(method, params, |v| match v {
            Value::Struct(_) => WikiPageInfo::from_value(v).map(Some),
            _ => Ok(None),
        })
        .await
    }

    /// A page's text and metadata (latest or the given version) in one
    /// `system.multicall` round trip; fault 404 if the page (version) is missing.
    pub async fn get_wiki_page_with_info(
        &self,
        name: &str,
        version: Option<i32>,
    ) -> Result<(String, WikiPageInfo), TracError> {
        check_name("wiki page", name)?;
        let (text_method, text_params) =
            page_and_version("wiki.getPage", "wiki.getPageVersion", name, version);
        let (info_method, info_params) =
            page_and_version("wiki.getPageInfo", "wiki.getPageInfoVersion", name, version);
        let mut answers = self
            .multicall(vec![
                RpcCall::new(text_method, text_params),
                RpcCall::new(info_method, info_params),
            ])
            .await?
            .into_iter();
        let (Some(text), Some(info)) = (answers.next(), answers.next()) else {
            return Err(self
                .transport
                .malformed("system.multicall", "expected 2 results".into()));
        };
        let text = as_string(&text?, "wiki page text")
            .map_err(|detail| self.transport.malformed(text_method, detail))?;
        let info = match info? {
            info @ Value::Struct(_) => WikiPageInfo::from_value(&info)
                .map_err(|detail| self.transport.malformed(info_method, detail))?,
            // the page vanished between the two calls of the batch
            _ => {
                return Err(TracError::Fault {
                    method: info_method.to_string(),
                    code: 404,
                    message: format!("Wiki page \"{name}\" does not exist"),
                });
            }
        };
        Ok((text, info))
    }

    /// `wiki.getRecentChanges`: pages changed since `since` (one entry per page, latest version).
    pub async fn wiki_recent_changes(
        &self,
        since: DateTime<Utc>,
    ) -> Result<Vec<WikiPageInfo>, TracError> {
        self.call_as("wiki.getRecentChanges", vec![datetime_value(since)], |v| {
            decode_list(v, "recent changes", WikiPageInfo::from_value)
        })
        .await
    }

    /// `wiki.getAllPages`: every page name.
    pub async fn list_wiki_pages(&self) -> Result<Vec<String>, TracError> {
        self.call_as("wiki.getAllPages", vec![], |v| {
            decode_list(v, "page names", |n| as_string(n, "page name"))
        })
        .await
    }

    /// `wiki.putPage`: creates the page or saves a new version. Trac faults
    /// with "Page not modified" when the text is unchanged.
    pub async fn put_wiki_page(
        &self,
        name: &str,
        text: &str,
        options: &PutPageOptions,
    ) -> Result<(), TracError> {
        check_name("wiki page", name)?;
        let params = vec![
            Value::String(name.to_string()),
            Value::String(text.to_string()),
            options.to_value(),
        ];
        self.call_as("wiki.putPage", params, |v| {
            match as_bool(v, "putPage result")? {
                true => Ok(()),
                false => Err("wiki.putPage answered false".to_string()),
            }
        })
        .await
    }

    /// `wiki.deletePage`: deletes all versions (or one). Returns `false` when
    /// there was nothing to delete (Trac does not fault for a missing page).
    pub async fn delete_wiki_page(
        &self,
        name: &str,
        version: Option<i32>,
    ) -> Result<bool, TracError> {
        check_name("wiki page", name)?;
        let mut params = vec![Value::String(name.to_string())];
        params.extend(version.map(Value::Integer));
        self.call_as("wiki.deletePage", params, |v| {
            as_bool(v, "deletePage result")
        })
        .await
    }

    /// `wiki.wikiToHtml`: renders TracWiki markup as Trac would show it (HTML fragment).
    pub async fn wiki_to_html(&self, text: &str) -> Result<String, TracError> {
        self.call_as(
            "wiki.wikiToHtml",
            vec![Value::String(text.to_string())],
            |v| as_string(v, "rendered HTML"),
        )
        .await
    }

    /// `search.performSearch`: full-text search; `filters` restricts the
    /// realms (e.g. `["wiki"]`); empty searches everything.
    pub async fn search(
        &self,
        query: &str,
        filters: &[&str],
    ) -> Result<Vec<SearchResult>, TracError> {
        if query.trim().is_empty() {
            return Err(TracError::InvalidArgument(
                "search query must not be empty".into(),
            ));
        }
        let mut params = vec![Value::String(query.to_string())];
        if !filters.is_empty() {
            params.push(Value::Array(
                filters
                    .iter()
                    .map(|f| Value::String(f.to_string()))
                    .collect(),
            ));
        }
        self.call_as("search.performSearch", params, |v| {
            decode_list(v, "search results", SearchResult::from_value)
        })
        .await
    }

    /// `search.getSearchFilters`: the realms that can be searched.
    pub async fn search_filters(&self) -> Result<Vec<SearchFilter>, TracError> {
        self.call_as("search.getSearchFilters", vec![], |v| {
            decode_list(v, "search filters", SearchFilter::from_value)
        })
        .await
    }
}

fn page_and_version(
    latest: &'static str,
    versioned: &'static str,
    name: &str,
    version: Option<i32>,
) -> (&'static str, Vec<Value>) {
    match version {
        None => (latest, vec![Value::String(name.to_string())]),
        Some(v) => (
            versioned,
            vec![Value::String(name.to_string()), Value::Integer(v)],
        ),
    }
}
