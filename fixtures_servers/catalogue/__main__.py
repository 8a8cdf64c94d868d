from fixtures_servers._stdio import main
from fixtures_servers.catalogue import DEFAULT_SIZE, SERVERS, build

main("catalogue", build, DEFAULT_SIZE, servers=tuple(SERVERS))
