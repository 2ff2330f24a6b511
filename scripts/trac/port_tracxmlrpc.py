"""Finish porting the TracXMLRPC 1.1.9 sources to Python 3 and Trac 1.6.

Run after the mechanical 2to3 pass, with the unpacked sdist as the only
argument.  Every edit below is an exact-text replacement that must match a
known number of times: if the input ever differs from the pinned sdist, the
script stops with the offending file and snippet instead of producing a
half-patched plugin.

Why each group exists:
  * Genshi is gone from Trac 1.6: markup types come from trac.util.html.
  * Trac API changes since 1.0: notification system, Ticket timestamps,
    WikiPage.save() arguments, web_context(), Request.send_error().
  * bytes vs str in attachments and base64 handling.
  * multicall: a failed member must marshal as {faultCode, faultString}.
"""
import os
import sys

SRC = sys.argv[1]


def replace(rel, old, new, count=1):
    """Replace `old` by `new` in SRC/rel, insisting on exactly `count` hits."""
    path = os.path.join(SRC, rel)
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    found = text.count(old)
    if found != count:
        sys.exit("port_tracxmlrpc: %s: wanted %d match(es) of %r, found %d"
                 % (rel, count, old[:70], found))
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text.replace(old, new))


def replace_span(rel, start, stop, new):
    """Replace the text from `start` up to (not including) `stop` by `new`."""
    path = os.path.join(SRC, rel)
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    try:
        i = text.index(start)
        j = text.index(stop, i)
    except ValueError:
        sys.exit("port_tracxmlrpc: %s: span %r..%r not found" % (rel, start, stop))
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text[:i] + new + text[j:])


# Marker in EDITS for the _dump_docs rewrite (see DOCS_PAGE below).
SPAN_DOCS_PAGE = "docs-page"

# (file, old text, new text[, expected count]), applied in this order
EDITS = [
    ("setup.py", "version='1.1.9'", "version='1.1.9+py3'"),
    # util / search / api: Python-2-only helpers
    ("tracrpc/util.py", "from trac.util.compat import any\n", "from io import BytesIO\n"),
    ("tracrpc/search.py", "from trac.util.compat import set\n", ""),
    ("tracrpc/api.py", "inspect.getargspec(", "inspect.getfullargspec("),
    ("tracrpc/api.py", "def __unicode__(self):", "def __str__(self):"),
    # xml_rpc: Genshi markup -> trac.util.html; Markup is a str subclass that
    # xmlrpc.client refuses to marshal, so hand it over as a plain str
    ("tracrpc/xml_rpc.py", "    import babel\n", "    import babel.support\n"),
    ("tracrpc/xml_rpc.py", "import genshi\n", "from trac.util.html import Fragment\n"),
    ("tracrpc/xml_rpc.py",
     """elif isinstance(res, (genshi.builder.Fragment, \\
                                  genshi.core.Markup)):
                new_result.append(to_unicode(res))""",
     """elif isinstance(res, (Fragment, str)) and type(res) is not str:
                new_result.append(str(res))"""),
    # multicall: failed members become {faultCode, faultString}
    ("tracrpc/xml_rpc.py", """            elif res is None or res is empty:""",
     """            elif isinstance(res, Exception):
                new_result.append({'faultCode':
                    -32601 if isinstance(res, MethodNotFound) else
                    403 if isinstance(res, PermissionError) else
                    404 if isinstance(res, ResourceNotFound) else
                    getattr(res, 'code', None) or 1,
                    'faultString': to_unicode(res)})
            elif res is None or res is empty:"""),
    # json_rpc: same markup story, plus base64 and JSONEncoder fixes
    ("tracrpc/json_rpc.py", "    import babel\n", "    import babel.support\n"),
    ("tracrpc/json_rpc.py", "import genshi\n",
     "import base64\nfrom trac.util.html import Fragment, Markup\n"),
    ("tracrpc/json_rpc.py", """(genshi.builder.Fragment,
                                  genshi.core.Markup)""", "(Fragment, Markup)"),
    ("tracrpc/json_rpc.py", "'^(\\d{4})", "r'^(\\d{4})"),
    ("tracrpc/json_rpc.py", 'obj.data.encode("base64")',
     'base64.b64encode(obj.data).decode("ascii")'),
    ("tracrpc/json_rpc.py", 'val.decode("base64")', "base64.b64decode(val)"),
    ("tracrpc/json_rpc.py", "return json.JSONEncoder(self, obj)",
     "return json.JSONEncoder.default(self, obj)"),
    # ticket: widgets, notifications, timestamps, attachments
    ("tracrpc/ticket.py", "import genshi\n",
     "from trac.util.html import Fragment, Element\n"
     "from trac.notification.api import NotificationSystem\n"),
    ("tracrpc/ticket.py", "import TicketNotifyEmail", "import TicketChangeEvent"),
    ("tracrpc/ticket.py", "fragment = genshi.builder.Fragment()", "fragment = Fragment()"),
    ("tracrpc/ticket.py", """            for elem in fragment.children:
                if not isinstance(elem, genshi.builder.Element):
                    continue
""", """            def _elements(node):
                for c in getattr(node, 'children', ()):
                    if isinstance(c, Element):
                        yield c
                    elif isinstance(c, Fragment):
                        yield from _elements(c)
            for elem in _elements(fragment):
"""),
    ("tracrpc/ticket.py", """tn = TicketNotifyEmail(self.env)
                tn.notify(t, newticket=True)""",
     """NotificationSystem(self.env).notify(TicketChangeEvent(
                    'created', t, t['time'], t['reporter']))"""),
    ("tracrpc/ticket.py", """tn = TicketNotifyEmail(self.env)
                tn.notify(t, newticket=False, modtime=when)""",
     """NotificationSystem(self.env).notify(TicketChangeEvent(
                    'changed', t, when, author, comment))"""),
    ("tracrpc/ticket.py", "t.time_changed", "t['changetime']", 4),
    ("tracrpc/ticket.py", "t.time_created", "t['time']"),
    ("tracrpc/ticket.py", "import StringIO,", "import BytesIO,"),
    ("tracrpc/ticket.py", "StringIO(data.data)", "BytesIO(data.data)"),
    ("tracrpc/ticket.py", "self.log.warn(", "self.log.warning(", 3),
    # wiki: rendering context, WikiPage.save(author, comment), attachments
    ("tracrpc/wiki.py", "from trac.mimeview import Context\n",
     "from trac.web.chrome import web_context\n"),
    ("tracrpc/wiki.py", "import wiki_to_html, format_to_html", "import format_to_html"),
    ("tracrpc/wiki.py", "Context.from_request(req, page.resource, absurls=True)",
     "web_context(req, page.resource, absurls=True)"),
    ("tracrpc/wiki.py", "% html.encode('utf-8')", "% html"),
    ("tracrpc/wiki.py", "attributes.get('comment'), req.remote_addr)",
     "attributes.get('comment'))"),
    ("tracrpc/wiki.py", "str(wiki_to_html(text, self.env, req, absurls=1))",
     "str(format_to_html(self.env, web_context(req, absurls=True), text))"),
    ("tracrpc/wiki.py", "import StringIO,", "import BytesIO,"),
    ("tracrpc/wiki.py", "StringIO(data.data)", "BytesIO(data.data)"),
    # web_ui: no Genshi templates; send_error() signature of Trac >= 1.3
    ("tracrpc/web_ui.py", """from genshi.builder import tag
from genshi.template.base import TemplateSyntaxError, BadDirectiveError
from genshi.template.text import TextTemplate
""", "from trac.util.html import tag\n"),
    ("tracrpc/web_ui.py", "from trac.wiki.formatter import wiki_to_oneliner\n", ""),
    SPAN_DOCS_PAGE,
    ("tracrpc/web_ui.py", """req.send_error(None, template='', content_type='text/plain',
                    status=HTTPUnsupportedMediaType.code, env=None, data=body)""",
     """req.send_error(None, body.encode('utf-8'), content_type='text/plain',
                    status=HTTPUnsupportedMediaType.code)"""),
    ("tracrpc/web_ui.py", """req.send_error(None, template='', content_type='text/plain',
                            env=None, data=body,
                            status=HTTPInternalServerError.code)""",
     """req.send_error(None, body.encode('utf-8'), content_type='text/plain',
                            status=HTTPInternalServerError.code)"""),
]

# GET /rpc used to render a Genshi HTML page; serve a plain-text method list.
DOCS_PAGE = '''\
    def _dump_docs(self, req):
        # Python 3 port: plain-text method listing instead of the Genshi page
        req.perm.require('XML_RPC')
        lines = []
        for m in sorted(XMLRPCSystem(self.env).all_methods(req),
                        key=lambda m: m.name):
            try:
                sig = m.signature
            except Exception:
                sig = m.name
            doc = (m.description or '').strip().splitlines()
            lines.append('%s  [%s]\\n    %s' % (sig, m.permission or '',
                                                doc[0] if doc else ''))
        req.send(('\\n'.join(lines) + '\\n').encode('utf-8'), 'text/plain')

'''

for edit in EDITS:
    if edit == SPAN_DOCS_PAGE:
        replace_span("tracrpc/web_ui.py", "    def _dump_docs(self, req):",
                     "    def _rpc_process(", DOCS_PAGE)
    else:
        replace(*edit)
print("port_tracxmlrpc: %d edits applied" % len(EDITS))
