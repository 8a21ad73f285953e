#!/usr/bin/env python3
"""Draw the web client's icons: an SVG and PNGs (standard library only).

The icon is a wooden rack holding four cards in order, on the table's green felt.
Writes services/gateway/static/icons/{icon.svg, icon-192.png, icon-512.png,
icon-maskable-512.png}. Run it again after changing the shapes below.
"""

from __future__ import annotations

import math
import struct
import zlib
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "services" / "gateway" / "static" / "icons"

Color = tuple[int, int, int]
# (x, y, width, height, corner radius, colour) in a 512-unit square, painted in order.
Shape = tuple[float, float, float, float, float, Color]

FELT: Color = (0x1F, 0x52, 0x40)
WOOD: Color = (0x8A, 0x5A, 0x33)
CARD: Color = (0xFB, 0xF8, 0xF1)
STRIPES: list[Color] = [
    (0x3F, 0x88, 0xC5),
    (0x4F, 0xA8, 0x8A),
    (0xB8, 0xB0, 0x48),
    (0xE0, 0x9A, 0x35),
]


def shapes(maskable: bool) -> list[Shape]:
    """The icon's rounded rectangles. A maskable icon is full-bleed and keeps to the safe zone."""
    scale, shift = (0.8, 51.2) if maskable else (1.0, 0.0)
    out: list[Shape] = [(0, 0, 512, 512, 0 if maskable else 104, FELT)]
    body: list[Shape] = [(84, 84, 344, 344, 40, WOOD)]
    for i, stripe in enumerate(STRIPES):
        x, y = 114 + 32 * i, 118 + 74 * i
        body.append((x, y, 200, 56, 12, CARD))
        body.append((x, y, 22, 56, 12, stripe))
        body.append((x + 11, y, 11, 56, 0, stripe))
        bar = x + 44 + 36 * i  # where the number sits: further right for higher cards
        body.append((bar, y + 16, 34, 24, 6, (0x2A, 0x32, 0x3E)))
    out += [
        (x * scale + shift, y * scale + shift, w * scale, h * scale, r * scale, c)
        for x, y, w, h, r, c in body
    ]
    return out


def svg(maskable: bool = False) -> str:
    def hexc(c: Color) -> str:
        return "#{:02x}{:02x}{:02x}".format(*c)

    rects = "\n".join(
        f'  <rect x="{x:g}" y="{y:g}" width="{w:g}" height="{h:g}" rx="{r:g}" fill="{hexc(c)}"/>'
        for x, y, w, h, r, c in shapes(maskable)
    )
    return f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 512 512">\n{rects}\n</svg>\n'


def coverage(px: float, py: float, shape: Shape) -> float:
    """How much of a one-unit pixel centred at (px, py) a rounded rectangle covers (0..1)."""
    x, y, w, h, r, _ = shape
    cx, cy = x + w / 2, y + h / 2
    qx = abs(px - cx) - (w / 2 - r)
    qy = abs(py - cy) - (h / 2 - r)
    outside = math.hypot(max(qx, 0.0), max(qy, 0.0))
    distance = outside + min(max(qx, qy), 0.0) - r
    return min(1.0, max(0.0, 0.5 - distance))


def raster(size: int, maskable: bool) -> bytes:
    unit = 512 / size
    parts = shapes(maskable)
    rows = []
    for j in range(size):
        row = bytearray([0])  # PNG filter: none
        py = (j + 0.5) * unit
        for i in range(size):
            px = (i + 0.5) * unit
            r = g = b = a = 0.0
            for shape in parts:
                sx, sy, sw, sh, sr, colour = shape
                if not (sx - unit <= px <= sx + sw + unit and sy - unit <= py <= sy + sh + unit):
                    continue
                scaled = (sx / unit, sy / unit, sw / unit, sh / unit, sr / unit, colour)
                cover = coverage(px / unit, py / unit, scaled)
                if cover <= 0:
                    continue
                c = shape[5]
                r, g, b = (
                    c[0] * cover + r * (1 - cover),
                    c[1] * cover + g * (1 - cover),
                    c[2] * cover + b * (1 - cover),
                )
                a = cover + a * (1 - cover)
            if a > 0:
                row += bytes(
                    (
                        round(r / a) if a < 1 else round(r),
                        round(g / a) if a < 1 else round(g),
                        round(b / a) if a < 1 else round(b),
                        round(a * 255),
                    )
                )
            else:
                row += b"\0\0\0\0"
        rows.append(bytes(row))
    return png(size, size, b"".join(rows))


def png(width: int, height: int, raw: bytes) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return (
            struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "icon.svg").write_text(svg())
    (OUT / "icon-192.png").write_bytes(raster(192, maskable=False))
    (OUT / "icon-512.png").write_bytes(raster(512, maskable=False))
    (OUT / "icon-maskable-512.png").write_bytes(raster(512, maskable=True))
    print(f"icons written to {OUT}")


if __name__ == "__main__":
    main()
