"""Twinsim over the Foxglove WebSocket protocol (`foxglove-sdk`): a recorded sequence streamed
in time order (`replay.stream_sequence`), or a running world published as it records
(`live.LivePublisher`). `messages` turns twinsim data into Foxglove messages; `server` holds the
WebSocket server and its channels. Only `commands` imports this package."""
