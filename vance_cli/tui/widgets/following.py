"""A scrolling pane that keeps its end in view until the person scrolls up (transcript, journal).

It follows on every change of its content's size, whenever that is laid out: a streamed reply
painted by a timer, Markdown laid out a refresh later, old entries pruned. (Checking "is it at
the end?" when something was added missed growth laid out after the check, and pruning, which
shrinks the content and clamps the scroll, looked like the person scrolling up.) Textual calls
``release_anchor`` for the person's scrolling (wheel, keys, scrollbar); that stops the following;
scrolling back to the end starts it again. Textual's own ``anchor()`` does the same but scrolls a
pane whose content is shorter than the view to a negative offset (content at the bottom).
"""

from __future__ import annotations

from textual.containers import VerticalScroll


class FollowingScroll(VerticalScroll):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.following = True

    def release_anchor(self) -> None:
        super().release_anchor()
        if self.max_scroll_y > 0:  # the person moved the view of something that scrolls
            self.following = False

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if not self.following and new > old and new >= self.max_scroll_y:
            self.following = True  # back at the end

    def _scroll_update(self, virtual_size) -> None:
        super()._scroll_update(virtual_size)
        if self.following:
            end = self.max_scroll_y
            if self.scroll_y != end:
                self.scroll_target_y = end
                self.scroll_y = end
