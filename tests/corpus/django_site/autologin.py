"""Test-only: a request without a session is logged in as the view-only staff user `viewer`."""

from collections.abc import Callable

from django.contrib.auth import get_user_model, login
from django.http import HttpRequest, HttpResponse

VIEWER = "viewer"


class AutoLogin:
    """Logs every anonymous request in (it gets a sessionid cookie), so a browser with no
    cookies reads the admin as the test's user would."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.user.is_authenticated:
            user = get_user_model().objects.get(username=VIEWER)
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return self.get_response(request)
