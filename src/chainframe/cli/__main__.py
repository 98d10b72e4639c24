import sys

from chainframe.cli import main

sys.exit(main())
