"""The changelist: filters, search, sortable columns, 10 a page; the publisher only on the
book's own page."""

from django.contrib import admin

from .models import Book


@admin.register(Book)
class BookAdmin(admin.ModelAdmin):
    list_display = ("title", "author", "genre", "year")
    list_filter = ("genre",)
    search_fields = ("title", "author")
    ordering = ("title",)
    list_per_page = 10
    fields = ("title", "author", "genre", "year", "publisher")
