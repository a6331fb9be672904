"""A figure's need picker, on a run page and a comparison: a menu up to ``NEED_MENU``
needs, a text box past that (a 7,000-option menu weighs 400 KB and is slow to render)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from django.urls import reverse

from leaderboard.pages.shortcuts import NEED_MENU
from tests.leaderboard.pages_data import add_run, make_benchmark

MENU, BOX = '<select id="need" name="need">', '<input id="need" name="need"'


@pytest.mark.parametrize("count", [NEED_MENU, NEED_MENU + 1])
def test_a_menu_up_to_the_limit_and_a_text_box_past_it(client, participant, count):
    needs = {f"n{i:04d}": f"need {i}" for i in range(count)}
    benchmark = make_benchmark("many", needs)
    rng = np.random.default_rng(7)
    a, b = (
        add_run(
            benchmark,
            participant,
            name,
            pd.DataFrame({"map": rng.random(count)}, index=list(needs)),
        )
        for name in ("a", "b")
    )
    pages = [
        reverse("submission", args=[a.pk]),
        reverse("compare", args=[benchmark.slug, a.pk, b.pk]),
    ]
    for url in pages:
        html = client.get(url).content.decode()
        assert (MENU in html, BOX in html) == (count <= NEED_MENU, count > NEED_MENU), url
