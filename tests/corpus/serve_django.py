"""Django's admin on 127.0.0.1 (a free port): the generated books behind a changelist, read
as a view-only staff user the server logs in itself. Usage: python serve_django.py DIR"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import serving
from data import books

BOOKS = 45
SITE = Path(__file__).with_name("django_site")


def main(folder: Path) -> None:
    sys.path.insert(0, str(SITE))
    os.environ["DJANGO_SETTINGS_MODULE"] = "settings"
    os.environ["CORPUS_DB"] = str(folder / "django.sqlite3")
    import django

    django.setup()
    from catalog.models import Book
    from django.contrib.auth.models import Permission, User
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.core.handlers.wsgi import WSGIHandler
    from django.core.management import call_command

    call_command("migrate", run_syncdb=True, verbosity=0)
    Book.objects.bulk_create(
        Book(id=b.id, title=b.title, author=b.author, genre=b.genre, year=b.year,
             publisher=b.publisher)
        for b in books(BOOKS)
    )  # fmt: skip
    viewer = User.objects.create_user("viewer", password="corpus", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_book"))
    serving.serve_wsgi(StaticFilesHandler(WSGIHandler()))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
