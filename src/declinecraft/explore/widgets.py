"""The JupyterLab view of the explorer (:func:`browse`): widgets to pick a filter, model and setting
and page through the questions it selects, each shown as :func:`~declinecraft.explore.question.show` does."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from declinecraft.explore.filters import FLAGS, search, setting_order, thinking_changes, transitions
from declinecraft.explore.question import show

#: Label choices of the transition filters: (shown, code).
LABEL_OPTIONS = [("any", "*"), ("ABSTAIN", "A"), ("DENY", "D"), ("ANSWER", "X"), ("no label", "-")]


def browse(
    frame: pl.DataFrame, *, questions: pl.DataFrame | Sequence[str] | None = None, chunks: pl.DataFrame | None = None
) -> Browser:
    """An ipywidgets view (JupyterLab) to pick model, setting and filter and page through questions.

    ``questions`` (a filter's frame or a list of ids) starts the view on those questions.
    """
    return Browser(frame, questions=questions, chunks=chunks)


class Browser:
    """Dropdowns for model, setting and filter, a search box and paging over questions."""

    def __init__(
        self,
        frame: pl.DataFrame,
        *,
        questions: pl.DataFrame | Sequence[str] | None = None,
        chunks: pl.DataFrame | None = None,
    ) -> None:
        import ipywidgets as w  # on use: it pulls in IPython, which the report and the filters do without

        self.frame, self.chunks, self.position = frame, chunks, 0
        settings = setting_order(frame["setting"].unique().to_list())

        def pick(s: str) -> str | None:
            return s if s in settings else (settings[0] if settings else None)

        ids = questions["question_id"] if isinstance(questions, pl.DataFrame) else (questions or [])
        self.given = list(dict.fromkeys(str(q) for q in ids))
        choices = [("given questions", "given")] if questions is not None else []
        choices += [
            ("all questions", "all"),
            ("label transition between settings", "transition"),
            ("thinking off → on (in setting)", "thinking"),
        ]
        choices += [(title, name) for name, (title, _) in FLAGS.items()]
        models = [("all models", "")] + [(m, m) for m in sorted(frame["model"].unique().to_list())]
        self.model = w.Dropdown(options=models, description="model")
        self.setting = w.Dropdown(options=[("all settings", "")] + [(s, s) for s in settings], description="setting")
        self.filter = w.Dropdown(options=choices, description="filter")
        self.before = w.Dropdown(options=settings, value=pick("single"), description="from")
        self.after = w.Dropdown(options=settings, value=pick("iterative"), description="to")
        self.from_label = w.Dropdown(options=LABEL_OPTIONS, value="A", description="label")
        self.to_label = w.Dropdown(options=LABEL_OPTIONS, value="X", description="→ label")
        self.search = w.Text(placeholder="words in question, page, responses", description="search")
        self.prev, self.next = w.Button(description="◀ previous"), w.Button(description="next ▶")
        self.status, self.view = w.Label(), w.HTML()
        for control in (
            self.model,
            self.setting,
            self.filter,
            self.before,
            self.after,
            self.from_label,
            self.to_label,
            self.search,
        ):
            control.observe(lambda _: self.refresh(), names="value")
        self.prev.on_click(lambda _: self.go(-1))
        self.next.on_click(lambda _: self.go(1))
        self.widget = w.VBox(
            [
                w.HBox([self.filter, self.model, self.setting]),
                w.HBox([self.before, self.after, self.from_label, self.to_label]),
                w.HBox([self.search, self.prev, self.next, self.status]),
                self.view,
            ]
        )
        self.refresh()

    def ids(self) -> list[str]:
        """Question ids the current choices select, in order."""
        rows = self.frame.filter(pl.col("model") == self.model.value) if self.model.value else self.frame
        kind, setting = self.filter.value, self.setting.value
        if kind == "given":
            found = self.given
        elif kind == "all":
            found = (rows.filter(pl.col("setting") == setting) if setting else rows)["question_id"].to_list()
        elif kind == "transition":
            found = transitions(
                rows,
                self.before.value,
                self.after.value,
                from_label=self.from_label.value,
                to_label=self.to_label.value,
            )["question_id"].to_list()
        elif kind == "thinking":
            found = thinking_changes(
                rows, setting or "no_rag", from_label=self.from_label.value, to_label=self.to_label.value
            )["question_id"].to_list()
        else:
            hits = FLAGS[kind][1](rows)
            found = (hits.filter(pl.col("setting") == setting) if setting else hits)["question_id"].to_list()
        if self.search.value.strip():
            matched = set(search(rows, self.search.value.strip())["question_id"])
            found = [q for q in found if q in matched]
        return list(dict.fromkeys(found))

    def refresh(self) -> None:
        """Recompute the question list and show its first question."""
        self.position = 0
        self.go(0)

    def go(self, step: int) -> None:
        """Move ``step`` questions forward (negative: back) and render."""
        ids = self.ids()
        self.position = max(0, min(self.position + step, len(ids) - 1))
        if not ids:
            self.status.value, self.view.value = "0 questions", "<p>No question matches.</p>"
            return
        qid = ids[self.position]
        self.status.value = f"{self.position + 1} / {len(ids)} · {qid}"
        model, setting = self.model.value, self.setting.value
        view = show(
            qid,
            self.frame,
            chunks=self.chunks,
            models=[model] if model else None,
            settings=[setting] if setting else None,
        )
        self.view.value = view._repr_html_()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)
