"""The web client is sent compressed, and cached by browsers without mixing two versions."""

from __future__ import annotations

import asyncio
import re
import shutil
from pathlib import Path

import httpx

from services.gateway.static_files import IMMUTABLE, REVALIDATE

from .conftest import StartGateway, http_url

STATIC = Path(__file__).resolve().parents[3] / "services" / "gateway" / "static"


async def test_the_page_is_compressed_and_its_files_are_cached_under_its_version(
    start_gateway: StartGateway, tmp_path: Path
) -> None:
    static = tmp_path / "static"
    shutil.copytree(STATIC, static)
    gateway = await start_gateway(static_dir=str(static))
    async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
        page = await http.get(http_url(gateway, "/"), headers={"Accept-Encoding": "gzip"})
        assert page.status_code == 200
        assert page.headers["content-encoding"] == "gzip"
        assert page.headers["cache-control"] == REVALIDATE
        script = re.search(r'src="(/v/([0-9a-f]{12})/js/app\.js)"', page.text)
        assert script is not None, "the page loads its script under its version"
        version = script.group(2)
        assert f'href="/v/{version}/css/app.css"' in page.text

        # The same page again: the browser's copy is still good (no body sent).
        again = await http.get(
            http_url(gateway, "/"), headers={"If-None-Match": page.headers["etag"]}
        )
        assert (again.status_code, again.content) == (304, b"")

        # Every module of that version (the relative imports land there too) is immutable.
        for path in ("js/app.js", "js/table.js", "css/app.css", "icons/icon.svg"):
            asset = await http.get(
                http_url(gateway, f"/v/{version}/{path}"), headers={"Accept-Encoding": "gzip"}
            )
            assert asset.status_code == 200, path
            assert asset.headers["cache-control"] == IMMUTABLE, path
            assert asset.content == (static / path).read_bytes()
        big = await http.get(
            http_url(gateway, f"/v/{version}/js/app.js"), headers={"Accept-Encoding": "gzip"}
        )
        assert big.headers["content-encoding"] == "gzip"
        assert int(big.headers["content-length"]) < len(big.content) / 2

        # Plain paths (the service worker's shell, sw.js itself) are checked again each time.
        for path in ("/sw.js", "/manifest.webmanifest", "/js/app.js"):
            plain = await http.get(http_url(gateway, path))
            assert (plain.status_code, plain.headers["cache-control"]) == (200, REVALIDATE)
            revalidated = await http.get(
                http_url(gateway, path), headers={"If-None-Match": plain.headers["etag"]}
            )
            assert revalidated.status_code == 304

        # A deploy changes a file: the page names a new version, and the old version's
        # URL no longer promises to stay the same.
        table_js = static / "js" / "table.js"
        table_js.write_text(table_js.read_text(encoding="utf-8") + "\n// changed\n")
        await _wait_for_a_new_version(http, http_url(gateway, "/"), version)
        old = await http.get(http_url(gateway, f"/v/{version}/js/table.js"))
        assert old.headers["cache-control"] == REVALIDATE
        assert old.content.endswith(b"// changed\n")
        assert (await http.get(http_url(gateway, f"/v/{version}/nothing.js"))).status_code == 404


async def _wait_for_a_new_version(http: httpx.AsyncClient, url: str, version: str) -> None:
    async with asyncio.timeout(10):
        while f"/v/{version}/" in (await http.get(url)).text:
            await asyncio.sleep(0.1)
