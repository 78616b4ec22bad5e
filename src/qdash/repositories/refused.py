"""A request a stored rule refuses, with its HTTP answer: the API answers ``status`` with
``{"detail": detail}`` for every such refusal (``qdash.api.setup``), so no route converts them."""


class RefusedError(Exception):
    """``status`` is the HTTP status (400, 403, 404, 409, 413), ``detail`` the message the caller sees."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
