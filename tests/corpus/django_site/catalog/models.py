"""The corpus's one model."""

from django.db import models


class Book(models.Model):
    GENRES = {"fiction": "Fiction", "poetry": "Poetry", "history": "History"}

    title = models.CharField(max_length=100)
    author = models.CharField(max_length=100)
    genre = models.CharField(max_length=20, choices=GENRES)
    year = models.IntegerField()
    publisher = models.CharField(max_length=100)

    def __str__(self) -> str:
        return self.title
