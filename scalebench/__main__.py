import sys

from scalebench._start import main

sys.exit(main())
