from fixtures_servers._stdio import main
from fixtures_servers.calendar import DEFAULT_SIZE, build

main("calendar", build, DEFAULT_SIZE)
