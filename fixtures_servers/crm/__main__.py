from fixtures_servers._stdio import main
from fixtures_servers.crm import DEFAULT_SIZE, build

main("crm", build, DEFAULT_SIZE)
