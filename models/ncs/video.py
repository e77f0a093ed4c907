"""Video sizes: the high-resolution (HR) original and the low-resolution (LR) copy NCS stores.

Mechanism (article L451, L563; digest M3):

* HR size = minutes x HR bitrate.  The 2160p bitrate is the restoration-test video's
  (703 MB for 10 minutes, L577); other resolutions scale with the pixel count to the power
  ``SIZE_PIXEL_EXPONENT``.
* LR size = HR size x (1 / downscale^2)^SIZE_PIXEL_EXPONENT x (1 - SR-aware bitrate saving).
  The exponent is derived from the article's only downscaling example: 4K -> FHD (4x fewer
  pixels) cut a 20-min file from 1.17 GB to 0.77 GB (L451).  SR-aware encoding saves up to
  15% bitrate at equal quality after SR (L563): the best content gets 15%, and the typical
  video -- the one the fleet-wide numbers average over -- is taken to get half of it
  (assumption: the saving spread evenly over 0-15% across contents; the digest's suggested
  range is 7.5-15%, its section 7.4).  The article's "up to" claims use the best content.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

#: Pixels per frame of each HR resolution (16:9).
RESOLUTION_PIXELS: dict[str, float] = {
    "2160p": 3840.0 * 2160.0,
    "1440p": 2560.0 * 1440.0,
    "1080p": 1920.0 * 1080.0,
}
RESOLUTIONS: tuple[str, ...] = tuple(RESOLUTION_PIXELS)
REFERENCE_RESOLUTION = "2160p"
FHD_DOWNSCALE_X = 2.0  # 3840x2160 -> 1920x1080 halves each side


def _videos() -> dict[str, dict[str, str]]:
    with open(Path(__file__).with_name("videos.csv"), newline="", encoding="utf-8") as fh:
        return {r["name"]: r for r in csv.DictReader(line for line in fh if not line.startswith("#"))}


VIDEOS = _videos()
_EXAMPLE = VIDEOS["downscale_example"]
#: LR/HR size of the article's 4K -> FHD example (0.77 / 1.17, L451).
FHD_SIZE_RATIO = float(_EXAMPLE["lr_mb"]) / float(_EXAMPLE["hr_mb"])
#: File size ~ pixels^exponent, from the 4K -> FHD example (4x fewer pixels -> 0.658x the bytes).
SIZE_PIXEL_EXPONENT = math.log(FHD_SIZE_RATIO) / math.log(1.0 / FHD_DOWNSCALE_X**2)
_TEST = VIDEOS["restore_test"]
#: HR bitrate of 2160p video, MB per minute (703 MB / 10 min, L577).
HR_MB_PER_MIN_2160P = float(_TEST["hr_mb"]) / float(_TEST["minutes"])
TEST_VIDEO_MIN = float(_TEST["minutes"])
#: SR-aware encoding: up to 15% lower bitrate at the same quality after SR (L563): the best content.
SR_BITRATE_SAVING_MAX_FRAC = 0.15
#: The typical video's SR-aware bitrate saving.  Assumption: savings spread evenly over 0 to the
#: article's "up to 15%" across contents, so the mean content gets half (digest section 7.4).
SR_BITRATE_SAVING_FRAC = 0.5 * SR_BITRATE_SAVING_MAX_FRAC


def pixel_scale(resolution_pixels):
    """HR pixels relative to 2160p."""
    return np.asarray(resolution_pixels, dtype=np.float64) / RESOLUTION_PIXELS[REFERENCE_RESOLUTION]


def hr_size_mb(video_min, resolution_pixels, hr_mb_per_min_2160p=HR_MB_PER_MIN_2160P, exponent=SIZE_PIXEL_EXPONENT):
    """HR file size, MB."""
    return video_min * hr_mb_per_min_2160p * pixel_scale(resolution_pixels) ** exponent


def lr_size_ratio(downscale_x, bitrate_saving_frac=SR_BITRATE_SAVING_FRAC, exponent=SIZE_PIXEL_EXPONENT):
    """LR size over HR size: fewer pixels, then the SR-aware bitrate cut."""
    return np.power(downscale_x, -2.0 * exponent) * (1.0 - bitrate_saving_frac)
