from localeval.cli import main

raise SystemExit(main())
