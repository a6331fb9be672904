"""One page of a ranked leaderboard: a search over its runs, Django's ``Paginator``, and
the two rows a reader must always be able to find.

Decisions, stated once:

- **Ranks are global.** The board is ranked first (``boards.build_leaderboard``, every
  run the reader may see), then filtered and cut into pages: a run keeps its rank
  whatever the page or the search.
- **Search** (``?q=``) matches the run's name, its participant and its description,
  case ignored, every word of the query somewhere (so ``bm25 alice`` finds Alice's BM25
  runs).
- **The leader is always findable**: when #1 is not among the rows shown (page 2, or a
  search that leaves it out) it is pinned above the table.
- **The reader's own runs are always findable**: a signed-in reader gets a "your runs"
  line with each run's rank and a link to the page it is on (in the unfiltered board).

Everything here works on the rows already loaded: no query, whatever the page.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.paginator import Page, Paginator

from leaderboard.reading.boards import Board, Row

PER_PAGE = 50
MAX_QUERY = 200  # characters of ?q= looked at


@dataclass
class OwnRun:
    row: Row
    page: int


@dataclass
class BoardPage:
    page: Page
    query: str
    matches: int  # rows the search kept (all rows without a search)
    pinned_leader: Row | None
    own: list[OwnRun]

    @property
    def rows(self) -> list[Row]:
        return list(self.page.object_list)


def matches(row: Row, words: list[str]) -> bool:
    text = f"{row.run_name}\n{row.participant}\n{row.team}\n{row.description}".lower()
    return all(word in text for word in words)


def board_page(board: Board, query: str | None, page: str | None, user) -> BoardPage:
    """The rows of ``board`` the reader asked for: those matching ``query``, page ``page``
    (Django's ``get_page``: a page number out of range or not a number gives the last or
    the first page, never an error)."""
    query = (query or "").strip()[:MAX_QUERY]
    words = query.lower().split()
    rows = [row for row in board.rows if matches(row, words)] if words else board.rows
    shown = Paginator(rows, PER_PAGE).get_page(page)
    leader = board.leader
    on_page = {row.submission_id for row in shown.object_list}
    pinned = leader if leader is not None and leader.submission_id not in on_page else None
    own = []
    if user.is_authenticated:
        own = [
            OwnRun(row, index // PER_PAGE + 1)
            for index, row in enumerate(board.rows)
            if row.participant_id == user.pk
        ]
    return BoardPage(shown, query, len(rows), pinned, own)
