"""The HTTP client the CLI commands share; server errors come back as typed errors."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

from ai_memory.core import errors
from ai_memory.core.identity import PageRef, Scope

_BY_CODE: dict[str, type[errors.AiMemoryError]] = {
    cls.code: cls
    for cls in (
        errors.InvalidInput,
        errors.InvalidPath,
        errors.InvalidIdentity,
        errors.InvalidFrontmatter,
        errors.TooLarge,
        errors.NotFound,
        errors.Conflict,
        errors.Unauthorized,
        errors.Forbidden,
        errors.Saturated,
        errors.Unavailable,
    )
}


def needs_tls(url: str) -> bool:
    """Plain-HTTP servers need no TLS context: loading the CA bundle costs ~50 ms per command,
    and redirects are not followed, so nothing can switch the client to https later."""
    return url.lower().startswith("https://")


class ApiClient:
    def __init__(self, base_url: str, token: str | None, timeout: float = 30.0) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.base_url = base_url.rstrip("/")
        self._http = httpx.Client(
            base_url=self.base_url,
            headers=headers,
            timeout=timeout,
            verify=needs_tls(self.base_url),
        )

    def close(self) -> None:
        self._http.close()

    def request(self, method: str, url: str, **kwargs: Any) -> Any:
        try:
            response = self._http.request(method, url, **kwargs)
        except httpx.TransportError as exc:
            raise errors.Unavailable(
                f"cannot reach the server at {self.base_url} ({type(exc).__name__}); "
                "is `ai-memory serve` running?"
            ) from exc
        if response.is_success:
            return response.json()
        raise _error_from(response)

    # Pages ------------------------------------------------------------------

    def read_page(self, ref: PageRef, version: int | None = None) -> dict[str, Any]:
        params = {"version": version} if version else {}
        data: dict[str, Any] = self.request("GET", _page_url(ref), params=params)
        return data

    def write_page(self, ref: PageRef, payload: dict[str, Any]) -> dict[str, Any]:
        data: dict[str, Any] = self.request("PUT", _page_url(ref), json=payload)
        return data

    def delete_page(self, ref: PageRef, expected_page_id: int | None) -> dict[str, Any]:
        params = {"expected_page_id": expected_page_id} if expected_page_id else {}
        data: dict[str, Any] = self.request("DELETE", _page_url(ref), params=params)
        return data

    def history(self, ref: PageRef) -> dict[str, Any]:
        url = f"/api/v1/projects/{ref.workspace}/{ref.project}/history/{quote(ref.path)}"
        data: dict[str, Any] = self.request("GET", url)
        return data

    def recent(self, scope: Scope, limit: int) -> dict[str, Any]:
        url = f"/api/v1/projects/{scope.workspace}/{scope.project}/pages"
        data: dict[str, Any] = self.request("GET", url, params={"limit": limit})
        return data

    def status(self, scope: Scope | None) -> dict[str, Any]:
        params = {"workspace": scope.workspace, "project": scope.project} if scope else {}
        data: dict[str, Any] = self.request("GET", "/api/v1/status", params=params)
        return data

    def projects(self) -> dict[str, Any]:
        data: dict[str, Any] = self.request("GET", "/api/v1/projects")
        return data


def _page_url(ref: PageRef) -> str:
    return f"/api/v1/projects/{ref.workspace}/{ref.project}/pages/{quote(ref.path)}"


def _error_from(response: httpx.Response) -> errors.AiMemoryError:
    try:
        payload = response.json()
    except ValueError:
        payload = {}
    if not isinstance(payload, dict):
        payload = {}
    code = str(payload.get("error", "http_error"))
    message = str(payload.get("message") or f"HTTP {response.status_code}")
    if response.status_code == 401:
        import os

        from ai_memory.hookclient.refusal import advice

        message = f"{message}: {advice(os.environ)}"
    if code == errors.PreconditionFailed.code:
        return errors.PreconditionFailed(message, payload.get("current_page_id"))
    cls = _BY_CODE.get(
        code, errors.InvalidInput if response.status_code < 500 else errors.AiMemoryError
    )
    error = cls(message)
    error.code = code
    return error
