//! The only HTML the web pages pass through unescaped, and how it is made
//! safe: READMEs rendered from Markdown with pulldown-cmark and sanitized with
//! ammonia, and search highlights re-sanitized so that nothing but `<mark>`
//! survives. [`SafeHtml`] can only be built by these functions; templates
//! print it as is and escape everything else.

use std::fmt;
use std::sync::LazyLock;

use ammonia::Builder;
use pulldown_cmark::{html, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// HTML that went through one of this module's sanitizers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SafeHtml(String);

impl SafeHtml {
    /// HTML that [`markdown`] produced earlier and the database kept (the
    /// README rendered at publish).
    pub fn stored(html: String) -> SafeHtml {
        SafeHtml(html)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for SafeHtml {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl askama::filters::HtmlSafe for SafeHtml {}

/// Escape text for HTML (element content and quoted attribute values).
pub fn escape(text: &str) -> SafeHtml {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#x27;"),
            c => out.push(c),
        }
    }
    SafeHtml(out)
}

static HIGHLIGHT: LazyLock<Builder<'static>> = LazyLock::new(|| {
    let mut b = Builder::empty();
    b.add_tags(["mark"]);
    b
});

/// A search highlight (text HTML-escaped, matches wrapped in `<mark>`), kept
/// only as `<mark>` and text. Whatever else it holds (a tag the search module
/// forgot to escape, attributes on `<mark>`) is dropped, not trusted.
pub fn highlight(snippet: &str) -> SafeHtml {
    SafeHtml(HIGHLIGHT.clean(snippet).to_string())
}

static README: LazyLock<Builder<'static>> = LazyLock::new(|| {
    let mut b = Builder::default();
    // Links in a README open a page elsewhere: no referrer, no opener, and no
    // ranking credit for whatever a publisher links to.
    b.link_rel(Some("nofollow noopener noreferrer"));
    b.url_schemes(["http", "https", "mailto"].into_iter().collect());
    // Raw `<img>` tags go too (Markdown images are links by now, see [`markdown`]).
    b.rm_tags(["img"]);
    b
});

/// A README (Markdown, possibly with raw HTML in it) as sanitized HTML:
/// no scripts, no event handler attributes, no `style`, no `javascript:` URLs.
pub fn markdown(text: &str) -> SafeHtml {
    let mut opts = Options::empty();
    opts.insert(Options::ENABLE_TABLES);
    opts.insert(Options::ENABLE_STRIKETHROUGH);
    opts.insert(Options::ENABLE_TASKLISTS);
    opts.insert(Options::ENABLE_FOOTNOTES);
    // The README sits under the page's h1 and its own h2, so its headings
    // move down two levels (h1 -> h3, ...) to keep the page's outline in order.
    // Images become links to the image: the CSP (`img-src 'self' data:`) would
    // not load remote ones, and bundle files are not served as images.
    let parser = Parser::new_ext(text, opts).flat_map(|event| match event {
        Event::Start(Tag::Heading {
            level,
            id,
            classes,
            attrs,
        }) => {
            vec![Event::Start(Tag::Heading {
                level: demote(level),
                id,
                classes,
                attrs,
            })]
        }
        Event::End(TagEnd::Heading(level)) => vec![Event::End(TagEnd::Heading(demote(level)))],
        Event::Start(Tag::Image {
            link_type,
            dest_url,
            title,
            id,
        }) => vec![
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }),
            Event::Text("Image: ".into()),
        ],
        Event::End(TagEnd::Image) => vec![Event::End(TagEnd::Link)],
        other => vec![other],
    });
    let mut raw = String::with_capacity(text.len() * 3 / 2);
    html::push_html(&mut raw, parser);
    SafeHtml(README.clean(&raw).to_string())
}

fn demote(level: HeadingLevel) -> HeadingLevel {
    match level {
        HeadingLevel::H1 => HeadingLevel::H3,
        HeadingLevel::H2 => HeadingLevel::H4,
        HeadingLevel::H3 => HeadingLevel::H5,
        _ => HeadingLevel::H6,
    }
}

/// Is `url` safe to put in an `href` (absolute http or https)?
pub fn is_web_url(url: &str) -> bool {
    url::Url::parse(url).is_ok_and(|u| matches!(u.scheme(), "http" | "https"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highlight_keeps_mark_and_escaped_text() {
        let h = highlight("<mark>calc</mark>ulator &lt;b&gt;");
        assert_eq!(h.as_str(), "<mark>calc</mark>ulator &lt;b&gt;");
    }

    #[test]
    fn highlight_drops_anything_but_mark() {
        let h = highlight(
            "<script>alert(1)</script><mark onclick=\"x()\">a</mark><img src=x onerror=alert(1)>",
        );
        assert!(!h.as_str().contains("<script"), "{h}");
        assert!(!h.as_str().contains("onclick"), "{h}");
        assert!(!h.as_str().contains("<img"), "{h}");
        assert!(h.as_str().contains("<mark>a</mark>"), "{h}");
    }

    #[test]
    fn readme_is_rendered_and_sanitized() {
        let md = "# Title\n\nSome *text*.\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n\n[x](javascript:alert(3)) <a href=\"https://e.com\" style=\"color:red\">e</a>\n";
        let html = markdown(md);
        let s = html.as_str();
        assert!(
            s.contains("<h3>Title</h3>"),
            "headings move down two levels: {s}"
        );
        assert!(s.contains("<em>text</em>"), "{s}");
        assert!(!s.contains("<script"), "{s}");
        assert!(!s.contains("onerror"), "{s}");
        assert!(!s.contains("javascript:"), "{s}");
        assert!(!s.contains("style="), "{s}");
        assert!(s.contains("rel=\"nofollow noopener noreferrer\""), "{s}");
    }

    #[test]
    fn readme_images_become_links() {
        let html = markdown("![build status](https://ci.example.com/badge.svg)\n\n<img src=\"https://e.com/x.png\">");
        let s = html.as_str();
        assert!(!s.contains("<img"), "{s}");
        assert!(
            s.contains("href=\"https://ci.example.com/badge.svg\""),
            "{s}"
        );
        assert!(s.contains("Image: build status"), "{s}");
    }

    #[test]
    fn escape_escapes_quotes_and_tags() {
        assert_eq!(
            escape("<a href=\"x\">'&").as_str(),
            "&lt;a href=&quot;x&quot;&gt;&#x27;&amp;"
        );
    }

    #[test]
    fn only_http_urls_are_links() {
        assert!(is_web_url("https://example.com/x"));
        assert!(!is_web_url("javascript:alert(1)"));
        assert!(!is_web_url("data:text/html,hi"));
        assert!(!is_web_url("not a url"));
    }
}
