import sys

from wasmsched.cli.main import main

sys.exit(main())
