"""Response handler for Deckhand's gabbi suite (../shared/deckhand-gabbits).

Its tests assert on `response_multidoc_jsonpaths`: the response body is a multi-document
YAML stream, read as a list of documents (a single document is [doc]), and each key is a
JSONPath into that list, as the Deckhand project's own handler does.
"""
import yaml
from gabbi.handlers import jsonhandler


class MultidocJsonpaths(jsonhandler.JSONHandler):
    test_key_suffix = 'multidoc_jsonpaths'

    @staticmethod
    def accepts(content_type):
        content_type = content_type.split(';', 1)[0].strip()
        return (content_type.endswith('+yaml') or
                content_type.startswith('application/yaml') or
                content_type.startswith('application/x-yaml'))

    @staticmethod
    def dumps(data, pretty=False, test=None):
        return yaml.safe_dump_all(data)

    @staticmethod
    def loads(string):
        return list(yaml.safe_load_all(string))
