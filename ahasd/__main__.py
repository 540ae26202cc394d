import sys

from ahasd.cli import main

sys.exit(main())
