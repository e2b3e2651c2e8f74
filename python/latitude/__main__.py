from latitude.cli import main

raise SystemExit(main())
