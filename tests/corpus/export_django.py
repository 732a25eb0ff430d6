"""The books Django's admin changelist lists for a query, in its order, as the ORM gives
them (the admin's own ChangeList queryset), as JSON on stdout.
Usage: python export_django.py DIR QUERY (DIR: the folder serve_django.py was given)"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

SITE = Path(__file__).with_name("django_site")


def main(folder: Path, query: str) -> None:
    sys.path.insert(0, str(SITE))
    os.environ["DJANGO_SETTINGS_MODULE"] = "settings"
    os.environ["CORPUS_DB"] = str(folder / "django.sqlite3")
    import django

    django.setup()
    from catalog.models import Book
    from django.contrib import admin
    from django.contrib.auth.models import User
    from django.test import RequestFactory

    request = RequestFactory().get("/admin/catalog/book/", data=None, QUERY_STRING=query)
    request.user = User.objects.get(username="viewer")
    changelist = admin.site.get_model_admin(Book).get_changelist_instance(request)
    rows = [
        {
            "title": b.title,
            "author": b.author,
            "genre": b.get_genre_display(),
            "year": str(b.year),
            "publisher": b.publisher,
        }
        for b in changelist.queryset
    ]
    print(json.dumps(rows))


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
