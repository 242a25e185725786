"""The Foxglove WebSocket server of one stream and its channels, one per topic."""

from __future__ import annotations

import foxglove
from foxglove import channels as fc

from twinsim._version import __version__
from twinsim.errors import TwinsimError


class Publisher:
    """A Foxglove WebSocket server on `host:port` (0: a free port) in its own SDK context, so
    two publishers in one process do not see each other's channels. `log(topic, message)`
    creates the topic's channel (typed by the message) on first use. A client that leaves, or
    sends what the protocol does not know, is dropped or ignored by the SDK: logging goes on."""

    def __init__(self, host: str = "127.0.0.1", port: int = 8765, name: str = "twinsim") -> None:
        self.context = foxglove.Context()
        try:
            self.server = foxglove.start_server(
                name=f"{name} {__version__}", host=host, port=port, context=self.context
            )
        except (RuntimeError, OSError, ValueError) as exc:
            raise TwinsimError(f"foxglove: cannot serve on {host}:{port} ({exc})") from None
        self.host = host
        self._channels: dict[str, object] = {}
        self.messages = 0

    @property
    def port(self) -> int:
        return int(self.server.port)

    @property
    def url(self) -> str:
        return f"ws://{self.host}:{self.port}"

    @property
    def topics(self) -> list[str]:
        return list(self._channels)

    def advertise(self, topic: str, message_type: type) -> None:
        """Create the channel of `topic` now (clients see it before its first message)."""
        if topic not in self._channels:
            channel_type = getattr(fc, f"{message_type.__name__}Channel")
            self._channels[topic] = channel_type(topic, context=self.context)

    def log(self, topic: str, message, log_time_ns: int | None = None) -> None:
        """Publish `message` on `topic`; its log time is `log_time_ns` (the stamp of the data)."""
        self.advertise(topic, type(message))
        channel = self._channels[topic]
        if log_time_ns is None:
            channel.log(message)
        else:
            channel.log(message, log_time=int(log_time_ns))
        self.messages += 1

    def restart_session(self) -> None:
        """Tell clients the data starts over (a sequence played again from its start)."""
        self.server.clear_session()

    def close(self) -> None:
        for channel in self._channels.values():
            channel.close()
        self._channels.clear()
        self.server.stop()

    def __enter__(self) -> Publisher:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
