"""Golden models (bit-accurate, pure Python) and the NPU+PIM system simulator."""
