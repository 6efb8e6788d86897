"""Checks the Deckhand suite's answers against purser's own GET /docs (t/5001).

The Perl tests check every exchange through t/lib/PurserOpenAPI.pm (JSON::Validator); the
Deckhand suite runs under gabbi, so this handler does the same for its answers with Debian's
python3-jsonschema: the operation is found by its path template, the answer's schema by its
status (or its "4XX"/"5XX" range), and the body, read by its content type, must match it. The
document comes from the file named by PURSER_OPENAPI_DOC; the counts of each gabbi-run are
appended to PURSER_OPENAPI_COUNTS.
"""
import copy
import json
import os
from urllib.parse import urlsplit

import jsonschema
import yaml
from gabbi.handlers import base


def _nullable(node):
    """OpenAPI 3.0's `nullable: true` as JSON Schema's type list."""
    if isinstance(node, dict):
        if node.get('nullable') and isinstance(node.get('type'), str):
            node['type'] = [node['type'], 'null']
        for value in node.values():
            _nullable(value)
    elif isinstance(node, list):
        for value in node:
            _nullable(value)
    return node


class Checker(object):
    def __init__(self, doc):
        self.doc = _nullable(copy.deepcopy(doc))
        self.templates = []
        for path in doc['paths']:
            parts = path.split('/')
            literal = sum(1 for p in parts if not p.startswith('{'))
            self.templates.append((literal, path, parts))
        self.templates.sort(key=lambda t: (-t[0], t[1]))
        self.counts = {'answers': 0, 'mismatches': 0, 'unmatched': 0}

    def template(self, path):
        parts = path.split('/')
        for _, template, want in self.templates:
            if len(want) != len(parts):
                continue
            if all(w == p if not w.startswith('{') else p != ''
                   for w, p in zip(want, parts)):
                return template
        return None

    def body(self, content_type, text):
        kind = content_type.split(';', 1)[0].strip().lower()
        if kind == 'application/json' or kind.endswith('+json'):
            return kind, json.loads(text)
        if kind == 'application/x-yaml':
            docs = [d for d in yaml.safe_load_all(text)]
            if len(docs) == 1:
                return kind, docs[0]
            return kind, [d for d in docs if d is not None]
        return kind, text

    def check(self, method, url, status, content_type, text):
        path = urlsplit(url).path
        template = self.template(path)
        operation = self.doc['paths'].get(template or '', {}).get(method.lower())
        if not operation:
            self.counts['unmatched'] += 1
            return []
        if method == 'HEAD' or status == 304:
            return []
        responses = operation['responses']
        key = str(status) if str(status) in responses else '%sXX' % str(status)[0]
        if key not in responses:
            self.counts['mismatches'] += 1
            return ['%s %s: answer %s: a status the operation does not list'
                    % (method, template, status)]
        self.counts['answers'] += 1
        content = responses[key].get('content', {})
        if not text:
            return []
        kind, value = self.body(content_type, text)
        if kind not in content:
            self.counts['mismatches'] += 1
            return ['%s %s: answer %s: content type %s is not one of %s'
                    % (method, template, status, kind, ', '.join(sorted(content)))]
        schema = dict(content[kind]['schema'])
        resolver = jsonschema.RefResolver('', self.doc)
        validator = jsonschema.Draft7Validator(schema, resolver=resolver)
        problems = ['%s %s: answer %s: %s at /%s' % (
            method, template, status, e.message,
            '/'.join(str(p) for p in e.absolute_path))
            for e in validator.iter_errors(value)]
        if problems:
            self.counts['mismatches'] += 1
        return problems


_checker = None


def checker():
    global _checker
    if _checker is None:
        with open(os.environ['PURSER_OPENAPI_DOC']) as f:
            _checker = Checker(json.load(f))
    return _checker


class OpenAPICheck(base.ResponseHandler):
    """Runs on every answer, whatever the test asks of it."""
    test_key_suffix = 'purser_openapi'
    test_key_value = []

    def __call__(self, test):
        if not os.environ.get('PURSER_OPENAPI_DOC'):
            return
        c = checker()
        problems = c.check(test.test_data['method'], test.url,
                           int(test.response['status']),
                           test.response.get('content-type', ''), test.output)
        counts = os.environ.get('PURSER_OPENAPI_COUNTS')
        if counts:
            with open(counts, 'a') as f:
                f.write('\t'.join('%s=%d' % (k, v) for k, v in sorted(c.counts.items())) + '\n')
            for k in c.counts:
                c.counts[k] = 0
        if problems:
            raise AssertionError('the answer does not match GET /docs:\n' +
                                 '\n'.join(problems[:10]))
